import { spawn } from 'node:child_process';
import { existsSync } from 'node:fs';
import { resolve } from 'node:path';
import { applyTestEnv } from './test-env.js';

const GATEWAY_MAIN = resolve('dist/apps/gateway/src/main.js');

export interface GatewayProcess {
  url: string;
  pid: number;
  // Sends SIGTERM and resolves when the process is gone.
  stop(): Promise<void>;
  output(): string;
}

// A gateway in a process of its own, from the compiled tree (as scripts/start.sh runs
// it), on a free port; for tests that read what the process itself prints. `nodeArgs`
// go to node before the script (a preload, say).
export async function startGatewayProcess(env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<GatewayProcess> {
  applyTestEnv();
  if (!existsSync(GATEWAY_MAIN)) throw new Error(`${GATEWAY_MAIN} is missing: run "npm run build" first (scripts/test.sh does)`);
  const child = spawn(process.execPath, ['--enable-source-maps', ...nodeArgs, GATEWAY_MAIN], {
    env: { ...process.env, LOG_LEVEL: 'info', GATEWAY_HOST: '127.0.0.1', GATEWAY_PORT: '0', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<void>((done) => child.once('exit', () => done()));
  const deadline = Date.now() + 30_000;
  let url: string | null = null;
  while (!url) {
    url = /listening on (http:\/\/[^\s"]+)/.exec(log)?.[1]?.replace('localhost', '127.0.0.1') ?? null;
    if (url) break;
    if (child.exitCode !== null || Date.now() > deadline) {
      child.kill('SIGKILL');
      throw new Error(`gateway process did not start:\n${log}`);
    }
    await new Promise((r) => setTimeout(r, 100));
  }
  return {
    url,
    pid: child.pid!,
    async stop() {
      if (child.exitCode === null && child.signalCode === null) child.kill('SIGTERM');
      await exited;
    },
    output: () => log,
  };
}
