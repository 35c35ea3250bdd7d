import { spawn, type ChildProcess } from 'node:child_process';
import { existsSync } from 'node:fs';
import { randomBytes } from 'node:crypto';
import { resolve } from 'node:path';
import { Redis } from 'ioredis';
import { redisOptions } from '@drydock/core';
import { applyTestEnv } from './test-env.js';

const WORKER_MAIN = resolve('dist/apps/worker/src/main.js');

export interface WorkerProcess {
  id: string;
  child: ChildProcess;
  // Sends the signal and resolves when the process is gone.
  kill(signal: NodeJS.Signals): Promise<void>;
  output(): string;
}

// A worker in a process of its own (the compiled one, as scripts/start.sh runs it), for
// tests that kill a worker the way an operator or the kernel would. scripts/test.sh
// builds dist/ before the tests run. `nodeArgs` go to node before the script.
export async function startWorkerProcess(env: Record<string, string> = {}, nodeArgs: string[] = []): Promise<WorkerProcess> {
  applyTestEnv();
  if (!existsSync(WORKER_MAIN)) throw new Error(`${WORKER_MAIN} is missing: run "npm run build" first (scripts/test.sh does)`);
  const id = `test-proc-${randomBytes(4).toString('hex')}`;
  const child = spawn(process.execPath, ['--enable-source-maps', ...nodeArgs, WORKER_MAIN], {
    env: { ...process.env, LOG_LEVEL: 'info', WORKER_ID: id, WORKER_DRAIN_TIMEOUT_MS: '1000', WORKER_DRAIN_SETTLE_MS: '200', ...env },
    stdio: ['ignore', 'pipe', 'pipe'],
  });
  let log = '';
  child.stdout!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  child.stderr!.on('data', (chunk: Buffer) => (log += chunk.toString()));
  const exited = new Promise<void>((resolveExit) => child.once('exit', () => resolveExit()));
  // Ready once it is registered (its heartbeat key exists) and its processors run.
  const redis = new Redis({ ...redisOptions(env.REDIS_URL ?? process.env.REDIS_URL!, 'test-worker-process'), maxRetriesPerRequest: 20 });
  try {
    const deadline = Date.now() + 30_000;
    while (!log.includes(`worker ${id} ready`)) {
      if (child.exitCode !== null) throw new Error(`worker process exited early:\n${log}`);
      if (Date.now() > deadline) throw new Error(`worker process did not become ready:\n${log}`);
      await new Promise((r) => setTimeout(r, 100));
    }
    if (!(await redis.exists(`drydock:worker:${id}`))) throw new Error('worker process is not registered');
  } catch (error) {
    child.kill('SIGKILL');
    throw error;
  } finally {
    redis.disconnect();
  }
  return {
    id,
    child,
    async kill(signal) {
      if (child.exitCode === null && child.signalCode === null) child.kill(signal);
      await exited;
    },
    output: () => log,
  };
}
