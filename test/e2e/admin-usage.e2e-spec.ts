import { startPlatform, type Platform } from './support/platform.js';

// GET /admin/usage: executions and batch items per tenant and UTC day, with the CPU time
// the sandboxes' cgroup counters measured, and what each tenant stores now.
describe('Admin: usage per tenant and day', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform();
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should count executions, CPU and wall seconds, batch items and stored bytes of each tenant', async () => {
    const [busy, idle] = [await platform.newTenant(), await platform.newTenant()];
    const session = await busy.createSession({ threadId: 'metered' });
    // About a second of CPU, then a second of sleep.
    const burn = await busy.execute(session.id, 'import time\nt = time.process_time()\nwhile time.process_time() - t < 1.0:\n    pass');
    const nap = await busy.execute(session.id, 'import time\ntime.sleep(1.0)');
    expect([burn.body.status, nap.body.status]).toEqual(['ok', 'ok']);
    expect(burn.body.cpuMs).toBeGreaterThan(900);
    expect(nap.body.cpuMs).toBeLessThan(500);
    await busy.request('PUT', '/v1/threads/metered/files/content?path=/data.txt', { body: 'x'.repeat(1000), headers: { 'content-type': 'text/plain' } });
    const batch = await busy.post('/v1/batches', { items: [{ code: 'print(1)' }, { code: 'print(2)' }] });
    for (let i = 0; i < 200 && (await busy.get(`/v1/batches/${batch.body.id}`)).body.status !== 'completed'; i++) await new Promise((r) => setTimeout(r, 100));

    const usage = await platform.admin.get(`/admin/usage?tenantId=${busy.tenantId}`);
    expect(usage.status).toBe(200);
    const today = new Date().toISOString().slice(0, 10);
    expect(usage.body.days).toEqual([
      {
        tenantId: busy.tenantId,
        day: today,
        executions: { count: 2, cpuSeconds: expect.any(Number), wallSeconds: expect.any(Number) },
        batchItems: { count: 2, cpuSeconds: expect.any(Number), wallSeconds: expect.any(Number) },
        // No network policy: nothing through the egress proxy.
        egress: { bytesIn: 0, bytesOut: 0 },
      },
    ]);
    const day = usage.body.days[0];
    expect(day.executions.cpuSeconds).toBeGreaterThan(0.9);
    expect(day.executions.cpuSeconds).toBeLessThan(1.6);
    expect(day.executions.wallSeconds).toBeGreaterThan(1.9);
    expect(usage.body.stored).toEqual([{ tenantId: busy.tenantId, threadFileBytes: 1000, artifactBytes: 0, artifactCount: 0 }]);

    // The other tenant used nothing; every tenant is listed without a filter.
    const all = await platform.admin.get('/admin/usage');
    expect(all.body.days.filter((d: { tenantId: string }) => d.tenantId === idle.tenantId)).toEqual([]);
    expect(all.body.stored).toContainEqual({ tenantId: idle.tenantId, threadFileBytes: 0, artifactBytes: 0, artifactCount: 0 });
    // Nothing before it existed.
    expect((await platform.admin.get(`/admin/usage?tenantId=${busy.tenantId}&to=2020-01-01&from=2019-12-01`)).body.days).toEqual([]);
    for (const query of ['from=2026-02-01&to=2026-01-01', 'from=2020-01-01&to=2026-01-01']) {
      const res = await platform.admin.get(`/admin/usage?${query}`);
      expect([query, res.status, res.body.error?.code]).toEqual([query, 400, 'INVALID_RANGE']);
    }
  });
});
