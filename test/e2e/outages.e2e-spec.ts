import { AIMessage } from '@langchain/core/messages';
import { Client } from '@langchain/langgraph-sdk';
import { Worker } from 'bullmq';
import { ScriptedModelProvider, type ChatScript } from '@drydock/agents';
import { redisOptions } from '@drydock/core';
import { closeQueueWorker } from '../../apps/worker/src/processors/close-queue-worker.js';
import type { ApiResponse } from './support/api-client.js';
import { startPlatform, type Platform } from './support/platform.js';
import { postgres, redis, unixSocketSettings } from './support/services.js';

// PostgreSQL and Redis stopped under a running platform, as an operator's restart would:
// requests answer 503 SERVICE_UNAVAILABLE with Retry-After, never a 500, and everything
// works again once the service is back. Needs root (it stops and starts the services
// scripts/lib/services.sh started); each test brings its service back even when it fails.
// Over TCP (scripts/test.sh's settings) and over the Unix sockets scripts/start.sh
// configures, where a stopped server is a missing socket file (ENOENT), not a refused port.
describe.each([
  ['TCP', () => ({})],
  ['Unix sockets', unixSocketSettings],
])('Outages of PostgreSQL and Redis over %s', (_transport, settings: () => Record<string, string>) => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ AUTH_CACHE_TTL_MS: '0', ...settings() });
  });

  afterAll(async () => {
    await platform?.close();
  });

  const expectUnavailable = (res: ApiResponse, service: string) => {
    expect(res.status).toBe(503);
    expect(res.body.error).toMatchObject({ code: 'SERVICE_UNAVAILABLE', details: { service } });
    expect(Number(res.headers.get('retry-after'))).toBeGreaterThan(0);
  };

  it('should answer 503 with Retry-After while PostgreSQL is down, and work again after', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession({ threadId: 'outage-pg' });
    expect((await api.execute(session.id, 'x = 1')).status).toBe(200);
    postgres('stop');
    try {
      expectUnavailable(await api.get(`/v1/sessions/${session.id}`), 'database');
      expectUnavailable(await api.execute(session.id, 'x += 1'), 'database');
      expectUnavailable(await api.post('/v1/batches', { items: [{ code: 'print(1)' }] }), 'database');
      expectUnavailable(await platform.admin.get('/admin/tenants'), 'database');
    } finally {
      postgres('start');
    }
    const back = await eventually(() => api.execute(session.id, 'x += 1\nx'));
    expect(back.body).toMatchObject({ status: 'ok', result: { text: '2' } });
  });

  it('should answer 503 with Retry-After to what needs Redis while it is down, and work again after', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession({ threadId: 'outage-redis' });
    expect((await api.execute(session.id, 'y = 1')).status).toBe(200);
    redis('stop');
    try {
      const started = Date.now();
      expectUnavailable(await api.execute(session.id, 'y += 1'), 'redis');
      expectUnavailable(await api.post('/v1/sessions', { threadId: 'outage-redis-2' }), 'redis');
      // Answered at once, not after Redis came back or a wait limit.
      expect(Date.now() - started).toBeLessThan(15_000);
      // What needs only PostgreSQL keeps working.
      expect((await api.get(`/v1/sessions/${session.id}`)).status).toBe(200);
    } finally {
      redis('start');
    }
    const back = await eventually(() => api.execute(session.id, 'y += 1\ny'));
    expect(back.body).toMatchObject({ status: 'ok', result: { text: '2' } });
  });
});

describe('Queue workers across a Redis restart', () => {
  // ioredis never ends a connection closed while it waits to reconnect, and BullMQ's
  // close waits for that end: a worker stopped just as Redis came back hung for ever.
  it('should close an idle queue worker stopped right after a Redis restart', async () => {
    const worker = new Worker('outage-idle', async () => undefined, { connection: redisOptions(process.env.REDIS_URL!, 'test-outage-idle') });
    worker.on('error', () => undefined);
    await worker.waitUntilReady();
    const blocking = (await worker.getBackend().blockingClient)!;
    redis('stop');
    try {
      await until(() => blocking.status === 'reconnecting');
    } finally {
      redis('start');
    }
    expect(blocking.status).toBe('reconnecting');
    await expect(closeQueueWorker(worker, 10_000)).resolves.toBe(true);
  });
});

// A run's checkpoints and its thread claim commit without waiting for their WAL flush;
// the run's release, which waits for it, comes before the answer and flushes them with
// it (docs/agent.md, "One graph, every thread"). A crash of PostgreSQL right after the answers must
// not lose any answered run.
describe('Agent runs across a crash of PostgreSQL', () => {
  let platform: Platform;

  beforeAll(async () => {
    const script: ChatScript = (turn) => new AIMessage(`noted ${turn.messages.length}`);
    platform = await startPlatform({}, { chatModels: new ScriptedModelProvider(() => script) });
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should keep every run it answered when PostgreSQL crashes right after the last answer', async () => {
    const tenant = await platform.newTenant();
    const client = new Client({ apiUrl: platform.url, apiKey: (tenant as unknown as { key: string }).key, callerOptions: { maxRetries: 0 } });
    const thread = await client.threads.create();
    const answered: string[] = [];
    for (let i = 0; i < 5; i++) {
      const values = (await client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: `note ${i}` }] } })) as {
        messages: { content: string }[];
      };
      answered.push(`note ${i}`, values.messages.at(-1)!.content);
    }
    postgres('crash');
    postgres('start');
    const state = await eventually(() => tenant.get(`/threads/${thread.thread_id}/state`));
    expect(state.status).toBe(200);
    expect((state.body.values.messages as { content: string }[]).map((m) => m.content)).toEqual(answered);
  });
});

async function until(condition: () => boolean, timeoutMs = 10_000): Promise<void> {
  const deadline = Date.now() + timeoutMs;
  while (!condition() && Date.now() < deadline) await new Promise((r) => setTimeout(r, 20));
}

// Retries a request until it stops answering 503 (clients reconnect on their own).
async function eventually(request: () => Promise<ApiResponse>, timeoutMs = 30_000): Promise<ApiResponse> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const res = await request();
    if (res.status !== 503 || Date.now() > deadline) return res;
    await new Promise((r) => setTimeout(r, 250));
  }
}
