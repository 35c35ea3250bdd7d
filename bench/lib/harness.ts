// Pieces every benchmark needs: order statistics, a table printer, the platform booted
// in this process (gateway + worker) and a JSON HTTP helper that names what failed.
import 'reflect-metadata';
import type { INestApplication, INestApplicationContext } from '@nestjs/common';
import { randomBytes } from 'node:crypto';
import type { AddressInfo } from 'node:net';
import { runMigrations } from '../../migrations/index.js';

export class BenchError extends Error {}

export interface Summary {
  n: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
}

// Nearest-rank percentile of an ascending array.
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  return {
    n: sorted.length,
    min: sorted[0]!,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[sorted.length - 1]!,
    mean: sorted.reduce((s, x) => s + x, 0) / sorted.length,
  };
}

export const fixed = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : '-');

export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

export interface InProcessPlatform {
  url: string;
  adminKey: string;
  workerId: string;
  gateway: INestApplication;
  close(): Promise<void>;
}

// Boots a worker and a gateway here, against DATABASE_URL/REDIS_URL (defaults: the
// local dev services). `env` is applied first: the app modules read the environment
// when they are imported.
export async function startInProcess(
  env: Record<string, string> = {},
  gatewayOptions: Record<string, unknown> = {},
): Promise<InProcessPlatform> {
  const e = process.env;
  e.DATABASE_URL ??= 'postgres://drydock:drydock@127.0.0.1:5432/drydock';
  e.REDIS_URL ??= 'redis://127.0.0.1:6379/0';
  e.DRYDOCK_ADMIN_KEY ??= 'dev-admin-key-0123456789abcdef';
  // The gateway refuses to start without it.
  e.ARTIFACTS_SIGNING_SECRET ??= 'bench-signing-secret-0123456789abcdef0123';
  e.SANDBOX_IMAGE ??= 'drydock/sandbox:latest';
  // The apps' JSON request logs would drown the figures.
  e.LOG_LEVEL ??= 'silent';
  const workerId = `bench-${randomBytes(4).toString('hex')}`;
  Object.assign(e, env, { WORKER_ID: workerId, GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1' });
  const [{ createWorker }, { createGateway }] = await Promise.all([
    import('../../apps/worker/src/bootstrap.js'),
    import('../../apps/gateway/src/bootstrap.js'),
  ]);
  await runMigrations(e.DATABASE_URL).catch((error: Error) => {
    throw new BenchError(`migrating ${e.DATABASE_URL} failed (is PostgreSQL up?): ${error.message}`);
  });
  const worker: INestApplicationContext = await createWorker({ logger: false });
  let gateway: INestApplication;
  try {
    gateway = await createGateway({ logger: false, ...gatewayOptions });
    await gateway.listen(0, '127.0.0.1');
  } catch (error) {
    await worker.close();
    throw error;
  }
  const { port } = gateway.getHttpServer().address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    adminKey: e.DRYDOCK_ADMIN_KEY,
    workerId,
    gateway,
    async close() {
      await gateway.close();
      await worker.close();
    },
  };
}

// A JSON request that throws a BenchError naming the URL when it cannot be made.
export async function api(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
  let res: Response;
  try {
    res = await fetch(base + path, {
      method,
      headers: {
        authorization: `Bearer ${key}`,
        accept: 'application/json',
        ...(body === undefined ? {} : { 'content-type': 'application/json' }),
      },
      body: body === undefined ? undefined : JSON.stringify(body),
    });
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    throw new BenchError(`${method} ${base + path} failed: ${cause ?? (error as Error).message}`);
  }
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: keep the text for the error message */
  }
  return { status: res.status, body: parsed };
}

// Wraps `proto[method]` so that the time of every call is passed to `record`.
export function timeMethod(proto: object, method: string, record: (ms: number) => void): void {
  const target = proto as Record<string, unknown>;
  const original = target[method];
  if (typeof original !== 'function') throw new BenchError(`${method} is gone: the bench needs updating`);
  target[method] = async function (this: unknown, ...args: unknown[]) {
    const started = performance.now();
    try {
      return await (original as (...a: unknown[]) => unknown).apply(this, args);
    } finally {
      record(performance.now() - started);
    }
  };
}

// The Docker id of a live session's container, from GET /admin/sessions (a sandbox taken
// from the warm pool keeps the labels it was started with, so labels do not name its
// session).
export async function containerOfSession(base: string, adminKey: string, sessionId: string): Promise<string> {
  const res = await api(base, adminKey, 'GET', '/admin/sessions');
  const session = (res.body?.sessions as { id: string; containerId: string | null }[] | undefined)?.find((s) => s.id === sessionId);
  if (!session?.containerId) throw new BenchError(`GET /admin/sessions names no container for ${sessionId} (${res.status})`);
  return session.containerId;
}

