import { Drydock } from '@drydock/client';
import { CliError, ExitCode } from './exit-codes.js';

export const DEFAULT_URL = 'http://localhost:8080';

// The options every command accepts (declared on the root program).
export interface GlobalOptions {
  url?: string;
  apiKey?: string;
  json?: boolean;
}

// Flags win over the environment; an empty variable counts as unset so that
// `DRYDOCK_API_KEY= drydock …` reports the missing key instead of sending an empty one.
function gatewayUrl(options: GlobalOptions, env: NodeJS.ProcessEnv): string {
  const url = options.url || env.DRYDOCK_URL || DEFAULT_URL;
  if (!URL.canParse(url) || !/^https?:$/.test(new URL(url).protocol)) {
    throw new CliError(ExitCode.Config, 'INVALID_URL', `Not an http(s) URL: ${url} (set DRYDOCK_URL or --url).`);
  }
  return url;
}

export function tenantClient(options: GlobalOptions, env: NodeJS.ProcessEnv): Drydock {
  const apiKey = options.apiKey || env.DRYDOCK_API_KEY;
  if (!apiKey) throw new CliError(ExitCode.Config, 'MISSING_API_KEY', 'No API key: set DRYDOCK_API_KEY or pass --api-key.');
  return new Drydock({ url: gatewayUrl(options, env), apiKey });
}

// Operator commands authenticate with the admin key, never with a tenant's.
export function adminClient(options: GlobalOptions & { adminKey?: string }, env: NodeJS.ProcessEnv): Drydock {
  const apiKey = options.adminKey || env.DRYDOCK_ADMIN_KEY;
  if (!apiKey) throw new CliError(ExitCode.Config, 'MISSING_ADMIN_KEY', 'No admin key: set DRYDOCK_ADMIN_KEY or pass --admin-key.');
  return new Drydock({ url: gatewayUrl(options, env), apiKey });
}
