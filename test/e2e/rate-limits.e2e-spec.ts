import type { INestApplication } from '@nestjs/common';
import { DataSource } from 'typeorm';
import type { Redis } from 'ioredis';
import { REDIS } from '@drydock/core';
import { createGateway } from '../../apps/gateway/src/bootstrap.js';
import { ApiClient } from './support/api-client.js';
import { startPlatform, type Platform } from './support/platform.js';

// Per-tenant rate limits (tenant limits requestsPerMinute and concurrentExecutions),
// shared by every gateway through Redis: past a limit, 429 RATE_LIMITED with
// Retry-After, and nothing recorded.
describe('Rate limits', () => {
  let platform: Platform;
  let second: INestApplication;
  let secondUrl: string;

  beforeAll(async () => {
    platform = await startPlatform({ GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1' });
    // A second gateway replica on the same PostgreSQL and Redis.
    const saved = { GATEWAY_PORT: process.env.GATEWAY_PORT, GATEWAY_HOST: process.env.GATEWAY_HOST };
    Object.assign(process.env, { GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1' });
    try {
      second = await createGateway({ logger: false });
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
    await second.listen(0, '127.0.0.1');
    secondUrl = (await second.getUrl()).replace('[::1]', '127.0.0.1');
  });

  afterAll(async () => {
    await second?.close();
    await platform?.close();
  });

  it('should answer 429 RATE_LIMITED with Retry-After past the tenant\'s requests per minute, counted across gateways', async () => {
    // The count is per clock minute: start well inside one.
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 100));
    const api = await platform.newTenant({ requestsPerMinute: 5 });
    const other = await platform.newTenant({ requestsPerMinute: 5 });
    const viaSecond = new ApiClient(secondUrl, (api as unknown as { key: string }).key);
    const statuses = [];
    for (const client of [api, viaSecond, api, viaSecond, api]) statuses.push((await client.get('/v1/sessions')).status);
    expect(statuses).toEqual([200, 200, 200, 200, 200]);
    for (const client of [api, viaSecond]) {
      const limited = await client.get('/v1/sessions');
      expect([limited.status, limited.body.error?.code]).toEqual([429, 'RATE_LIMITED']);
      const retryAfter = Number(limited.headers.get('retry-after'));
      expect(retryAfter).toBeGreaterThan(0);
      expect(retryAfter).toBeLessThanOrEqual(60);
    }
    // Another tenant's budget is its own.
    expect((await other.get('/v1/sessions')).status).toBe(200);
  });

  it('should count executions as requests, refusing one past the minute\'s budget before recording it', async () => {
    const intoMinute = Date.now() % 60_000;
    if (intoMinute > 50_000) await new Promise((r) => setTimeout(r, 60_000 - intoMinute + 100));
    const api = await platform.newTenant({ requestsPerMinute: 3 });
    const session = await api.createSession({ threadId: 'counted' });
    expect((await api.execute(session.id, 'print(1)')).status).toBe(200);
    expect((await api.execute(session.id, 'print(2)')).status).toBe(200);
    const limited = await api.execute(session.id, 'print(3)');
    expect([limited.status, limited.body.error?.code, limited.body.error?.details?.per]).toEqual([429, 'RATE_LIMITED', 'minute']);
    const db = platform.gateway.get(DataSource);
    const [{ n }] = await db.query('SELECT count(*)::int AS n FROM executions WHERE tenant_id = $1', [api.tenantId]);
    expect(n).toBe(2);
    // The refused execution took no slot: nothing is held for the tenant.
    const held = await platform.worker.get<Redis>(REDIS).zcard(`drydock:rate:executions:${api.tenantId}`);
    expect(held).toBe(0);
  });

  it('should refuse an execution past the tenant\'s concurrent executions, recording nothing, and take it once one finished', async () => {
    const api = await platform.newTenant({ concurrentExecutions: 1 });
    const [first, next] = [await api.createSession({ threadId: 'c1' }), await api.createSession({ threadId: 'c2' })];
    const running = api.execute(first.id, 'import time\ntime.sleep(2)\nprint("done")');
    const db = platform.gateway.get(DataSource);
    const recorded = async () => (await db.query('SELECT count(*)::int AS n FROM executions WHERE tenant_id = $1', [api.tenantId]))[0].n;
    // Once the first is under way, a second one is refused at once.
    for (let i = 0; i < 100 && (await recorded()) === 0; i++) await new Promise((r) => setTimeout(r, 20));
    const refused = await api.execute(next.id, 'print("too many")');
    expect([refused.status, refused.body.error?.code]).toEqual([429, 'RATE_LIMITED']);
    expect(Number(refused.headers.get('retry-after'))).toBeGreaterThan(0);
    expect(await recorded()).toBe(1);
    expect((await running).body).toMatchObject({ status: 'ok', stdout: 'done\n' });
    // The slot was given back.
    expect((await api.execute(next.id, 'print("now")')).body).toMatchObject({ status: 'ok', stdout: 'now\n' });
  });
});
