import { startPlatform, type Platform } from './support/platform.js';

// GET /admin/executions: every tenant's executions for an operator, newest first, paged,
// filtered by tenant, status and time.
describe('Admin: executions across tenants', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform();
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should page, filter by tenant, status and time, and refuse bad filters with 400', async () => {
    const started = new Date().toISOString();
    const [a, b] = [await platform.newTenant(), await platform.newTenant()];
    const ids: Record<string, string[]> = { [a.tenantId]: [], [b.tenantId]: [] };
    for (const api of [a, b]) {
      const session = await api.createSession({ threadId: 'listed' });
      for (const code of ['print(1)', 'raise ValueError("no")', 'print(3)']) {
        const res = await api.execute(session.id, code);
        ids[api.tenantId]!.unshift(res.body.id);
      }
    }
    const list = (query: string) => platform.admin.get(`/admin/executions?${query}`);

    const mine = await list(`tenantId=${a.tenantId}`);
    expect(mine.status).toBe(200);
    expect(mine.body.executions.map((e: { id: string }) => e.id)).toEqual(ids[a.tenantId]);
    expect(mine.body.executions[0]).toMatchObject({ tenantId: a.tenantId, status: 'ok', stdout: '3\n' });
    expect(mine.body.next).toBeNull();

    const errors = await list(`tenantId=${b.tenantId}&status=error`);
    expect(errors.body.executions.map((e: { id: string; status: string }) => [e.id, e.status])).toEqual([[ids[b.tenantId]![1], 'error']]);

    // Pages of two, across tenants, since the test started: each execution once, in order.
    const seen: string[] = [];
    let next: string | null = null;
    do {
      const page = await list(`from=${encodeURIComponent(started)}&limit=2${next ? `&before=${next}` : ''}`);
      expect(page.body.executions.length).toBeLessThanOrEqual(2);
      seen.push(...page.body.executions.map((e: { id: string }) => e.id));
      next = page.body.next;
    } while (next);
    expect(seen.filter((id) => ids[a.tenantId]!.includes(id) || ids[b.tenantId]!.includes(id))).toEqual([...ids[b.tenantId]!, ...ids[a.tenantId]!]);
    expect((await list(`tenantId=${a.tenantId}&to=${encodeURIComponent(started)}`)).body.executions).toEqual([]);

    for (const [query, code] of [
      ['status=finished', 'VALIDATION_FAILED'],
      ['tenantId=acme', 'VALIDATION_FAILED'],
      ['from=yesterday', 'VALIDATION_FAILED'],
      ['limit=0', 'VALIDATION_FAILED'],
      ['before=bm90LWEtY3Vyc29y', 'INVALID_CURSOR'],
    ]) {
      const res = await list(query!);
      expect([query, res.status, res.body.error?.code]).toEqual([query, 400, code]);
    }
    expect((await a.get('/admin/executions')).status).toBe(401);
  });
});
