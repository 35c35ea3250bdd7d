import { chmodSync, mkdirSync, readFileSync, renameSync, rmSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { Drydock } from '@drydock/client';
import { CliError, ExitCode, usageError } from './exit-codes.js';

export const DEFAULT_URL = 'http://localhost:8080';

// The options every command accepts (declared on the root program).
export interface GlobalOptions {
  url?: string;
  apiKey?: string;
  json?: boolean;
}

// What `drydock login` saves: a gateway and a tenant key for it.
export interface SavedLogin {
  url: string;
  apiKey: string;
}

// $XDG_CONFIG_HOME/drydock/config.json, else ~/.config/drydock/config.json.
export function configPath(env: NodeJS.ProcessEnv): string {
  const base = env.XDG_CONFIG_HOME || join(env.HOME || '.', '.config');
  return join(base, 'drydock', 'config.json');
}

// The saved login, or null when there is none. A file that is there but unreadable is a
// configuration problem (exit 4), never silently ignored.
export function readLogin(env: NodeJS.ProcessEnv): SavedLogin | null {
  const path = configPath(env);
  let text: string;
  try {
    text = readFileSync(path, 'utf8');
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return null;
    throw new CliError(ExitCode.Config, 'INVALID_CONFIG', `Cannot read ${path}: ${(error as Error).message}`);
  }
  let saved: Partial<SavedLogin>;
  try {
    saved = JSON.parse(text) as Partial<SavedLogin>;
  } catch {
    throw new CliError(ExitCode.Config, 'INVALID_CONFIG', `${path} is not JSON: run drydock login again, or remove it.`);
  }
  if (typeof saved?.url !== 'string' || typeof saved.apiKey !== 'string') {
    throw new CliError(ExitCode.Config, 'INVALID_CONFIG', `${path} has no url and apiKey: run drydock login again, or remove it.`);
  }
  return { url: saved.url, apiKey: saved.apiKey };
}

// Written whole or not at all (a new file renamed over the old one), readable by its
// owner only: it holds a key.
export function saveLogin(env: NodeJS.ProcessEnv, login: SavedLogin): string {
  const path = configPath(env);
  const partial = `${path}.${process.pid}.tmp`;
  try {
    mkdirSync(dirname(path), { recursive: true, mode: 0o700 });
    writeFileSync(partial, JSON.stringify(login, null, 2) + '\n', { mode: 0o600 });
    // The mode of a new file is masked by the umask; make sure of it.
    chmodSync(partial, 0o600);
    renameSync(partial, path);
  } catch (error) {
    rmSync(partial, { force: true });
    throw usageError('LOCAL_FILE_UNWRITABLE', `Cannot write ${path}: ${(error as Error).message}`);
  }
  return path;
}

// Removes the saved login; false when there was none.
export function forgetLogin(env: NodeJS.ProcessEnv): { path: string; removed: boolean } {
  const path = configPath(env);
  try {
    rmSync(path);
    return { path, removed: true };
  } catch (error) {
    if ((error as NodeJS.ErrnoException).code === 'ENOENT') return { path, removed: false };
    throw usageError('LOCAL_FILE_UNWRITABLE', `Cannot remove ${path}: ${(error as Error).message}`);
  }
}

export function checkUrl(url: string, where = 'set DRYDOCK_URL or --url'): string {
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new CliError(ExitCode.Config, 'INVALID_URL', `Not an http(s) URL: ${url} (${where}).`);
  }
  return url;
}

// The same gateway, however it was written (a trailing slash, the default port).
const sameGateway = (a: string, b: string) => URL.canParse(a) && URL.canParse(b) && new URL(a).href.replace(/\/+$/, '') === new URL(b).href.replace(/\/+$/, '');

// Flags win over the environment, the environment over the saved login; an empty
// variable counts as unset so that `DRYDOCK_API_KEY= drydock …` does not send an empty
// key. The saved key goes only to the gateway it was saved for: with another URL (a flag
// or DRYDOCK_URL) it is not sent.
export function gatewayUrl(options: GlobalOptions, env: NodeJS.ProcessEnv, saved: SavedLogin | null): string {
  return checkUrl(options.url || env.DRYDOCK_URL || saved?.url || DEFAULT_URL);
}

export function tenantClient(options: GlobalOptions, env: NodeJS.ProcessEnv, saved: SavedLogin | null): Drydock {
  const url = gatewayUrl(options, env, saved);
  const savedKey = saved && sameGateway(saved.url, url) ? saved.apiKey : undefined;
  const apiKey = options.apiKey || env.DRYDOCK_API_KEY || savedKey;
  if (!apiKey) {
    const hint = saved ? ` (the key saved by drydock login is for ${saved.url}, not ${url})` : '';
    throw new CliError(ExitCode.Config, 'MISSING_API_KEY', `No API key: run drydock login, set DRYDOCK_API_KEY or pass --api-key${hint}.`);
  }
  return new Drydock({ url, apiKey });
}

// Operator commands authenticate with the admin key, never with a tenant's (and never
// with a saved one: drydock login saves a tenant key).
export function adminClient(options: GlobalOptions & { adminKey?: string }, env: NodeJS.ProcessEnv, saved: SavedLogin | null): Drydock {
  const apiKey = options.adminKey || env.DRYDOCK_ADMIN_KEY;
  if (!apiKey) throw new CliError(ExitCode.Config, 'MISSING_ADMIN_KEY', 'No admin key: set DRYDOCK_ADMIN_KEY or pass --admin-key.');
  return new Drydock({ url: gatewayUrl(options, env, saved), apiKey });
}
