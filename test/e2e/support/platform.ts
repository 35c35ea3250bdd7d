import type { INestApplication, INestApplicationContext } from '@nestjs/common';
import Docker from 'dockerode';
import type { FastifyInstance } from 'fastify';
import { randomBytes } from 'node:crypto';
import { DataSource } from 'typeorm';
import { createGateway } from '../../../apps/gateway/src/bootstrap.js';
import type { GatewayOptions } from '../../../apps/gateway/src/gateway.module.js';
import { createWorker } from '../../../apps/worker/src/bootstrap.js';
import { runMigrations } from '../../../migrations/index.js';
import { ApiClient } from './api-client.js';
import { applyTestEnv } from './test-env.js';

export interface Platform {
  url: string;
  // The gateway application, for tests that call its services directly.
  gateway: INestApplication;
  // Every route the gateway's Fastify instance registered (its onRoute hook), Fastify's
  // own HEAD routes included.
  routes: { method: string; url: string }[];
  workerId: string;
  worker: INestApplicationContext;
  // Starts one more worker (its own id and queue) with extra environment.
  addWorker(env?: Record<string, string>): Promise<{ id: string; app: INestApplicationContext; stop(): Promise<void> }>;
  // Gracefully stops the worker started with the platform.
  stopWorker(): Promise<void>;
  admin: ApiClient;
  anonymous: ApiClient;
  docker: Docker;
  newTenant(limits?: Record<string, unknown>): Promise<ApiClient & { tenantId: string }>;
  containerOf(sessionId: string): Promise<Docker.ContainerInspectInfo>;
  close(): Promise<void>;
}

// Boots a real worker and gateway in this process, against the real PostgreSQL,
// Redis and Docker. Each platform has its own worker id, so its containers and queue
// are its own.
// The e2e-gvisor project (jest.config.js) runs suites again with every session on the
// gvisor tier (test/e2e/support/gvisor-tier.ts sets E2E_TIER).
export const E2E_TIER: 'runc' | 'gvisor' = process.env.E2E_TIER === 'gvisor' ? 'gvisor' : 'runc';
const tierEnv = (): Record<string, string> =>
  E2E_TIER === 'gvisor' ? { SANDBOX_GVISOR_RUNTIME: 'runsc', SANDBOX_DEFAULT_TIER: 'gvisor' } : {};

export async function startPlatform(
  env: Record<string, string> = {},
  gatewayOptions: GatewayOptions = {},
): Promise<Platform> {
  applyTestEnv();
  // The schema comes from the real migrations (idempotent; TypeORM takes a lock).
  await runMigrations(process.env.DATABASE_URL!);
  const workerId = `test-${randomBytes(4).toString('hex')}`;
  const base = { GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1', WORKER_DRAIN_TIMEOUT_MS: '1000', WORKER_DRAIN_SETTLE_MS: '200', ...tierEnv(), ...env };
  const worker = await withEnv({ ...base, WORKER_ID: workerId }, () => createWorker({ logger: false }));
  const gateway: INestApplication = await withEnv(base, () => createGateway({ ...gatewayOptions, logger: false }));
  const routes: { method: string; url: string }[] = [];
  (gateway.getHttpAdapter().getInstance() as FastifyInstance).addHook('onRoute', (route) => {
    for (const method of [route.method].flat()) routes.push({ method, url: route.url });
  });
  await gateway.listen(0, '127.0.0.1');
  const running = new Set<INestApplicationContext>([worker]);
  const stop = async (app: INestApplicationContext) => {
    if (!running.delete(app)) return;
    await app.close();
  };
  const url = (await gateway.getUrl()).replace('[::1]', '127.0.0.1');
  const admin = new ApiClient(url, process.env.DRYDOCK_ADMIN_KEY!);
  const docker = new Docker({ socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock' });

  return {
    url,
    gateway,
    routes,
    workerId,
    worker,
    async addWorker(extra = {}) {
      const id = `test-${randomBytes(4).toString('hex')}`;
      const app = await withEnv({ ...base, ...extra, WORKER_ID: id }, () => createWorker({ logger: false }));
      running.add(app);
      return { id, app, stop: () => stop(app) };
    },
    stopWorker: () => stop(worker),
    admin,
    anonymous: new ApiClient(url, null),
    docker,
    async newTenant(limits) {
      const res = await admin.post('/admin/tenants', { name: `tenant-${randomBytes(3).toString('hex')}`, limits });
      if (res.status !== 201) throw new Error(`tenant create failed: ${JSON.stringify(res.body)}`);
      return Object.assign(new ApiClient(url, res.body.apiKey), { tenantId: res.body.id as string });
    },
    // The container the session's row records (a sandbox taken from the warm pool keeps
    // the labels it was started with, so labels do not name its session).
    async containerOf(sessionId) {
      const rows: { container_id: string | null }[] = await gateway
        .get(DataSource)
        .query('SELECT container_id FROM sessions WHERE id = $1', [sessionId]);
      const id = rows[0]?.container_id;
      const info = id ? await docker.getContainer(id).inspect().catch(() => null) : null;
      if (!info?.State.Running) throw new Error(`no running container for ${sessionId}`);
      return info;
    },
    // Every app is closed even when one fails; a failure is then thrown, not swallowed:
    // an app left half-closed keeps consuming queues in this process after its suite.
    async close() {
      const failures: Error[] = [];
      const attempt = (closing: Promise<void>) => closing.catch((error: Error) => void failures.push(error));
      await attempt(gateway.close());
      await Promise.all([...running].map((app) => attempt(stop(app))));
      if (failures.length > 0) throw new AggregateError(failures, `closing the platform failed: ${failures.map((e) => e.message).join('; ')}`);
    },
  };
}

// Config is read from the environment when an app is created; set it for that moment
// only, so one suite's settings never leak into the next platform.
async function withEnv<T>(env: Record<string, string>, create: () => Promise<T>): Promise<T> {
  const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
  Object.assign(process.env, env);
  try {
    return await create();
  } finally {
    for (const [key, value] of Object.entries(saved)) {
      if (value === undefined) delete process.env[key];
      else process.env[key] = value;
    }
  }
}
