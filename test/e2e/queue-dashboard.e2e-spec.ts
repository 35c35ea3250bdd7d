import { startPlatform, type Platform } from './support/platform.js';

// Bull Board at /admin/queues/ui, behind the admin key (bearer, or Basic auth's
// password for a browser), showing the batch, maintenance and live workers' queues.
describe('Queue dashboard', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform();
  });

  afterAll(async () => {
    await platform?.close();
  });

  const get = (path: string, authorization?: string) =>
    fetch(`${platform.url}/admin/queues/ui${path}`, { headers: authorization ? { authorization } : {} });
  const basic = (password: string) => `Basic ${Buffer.from(`ops:${password}`).toString('base64')}`;

  it('should ask for the admin key, refuse a wrong one, and serve the board for the right one', async () => {
    const anonymous = await get('');
    expect(anonymous.status).toBe(401);
    expect(anonymous.headers.get('www-authenticate')).toMatch(/^Basic realm="Drydock admin"/);
    expect(((await anonymous.json()) as { error: { code: string } }).error.code).toBe('UNAUTHORIZED');

    const wrong = await get('', basic('not-the-admin-key-at-all'));
    expect([wrong.status, ((await wrong.json()) as { error: { code: string } }).error.code]).toEqual([401, 'INVALID_ADMIN_KEY']);
    const tenant = await platform.newTenant();
    expect((await get('', `Bearer ${(tenant as unknown as { key: string }).key}`)).status).toBe(401);

    const page = await get('', basic(process.env.DRYDOCK_ADMIN_KEY!));
    expect(page.status).toBe(200);
    expect(page.headers.get('content-type')).toMatch(/text\/html/);
    expect(await page.text()).toContain('Drydock queues');
  });

  it('should list the batch, maintenance and every live worker\'s queue through its API', async () => {
    const res = await get('/api/queues', `Bearer ${process.env.DRYDOCK_ADMIN_KEY}`);
    expect(res.status).toBe(200);
    const names = (((await res.json()) as { queues: unknown }).queues as { name: string }[]).map((q) => q.name);
    expect(names).toEqual(expect.arrayContaining(['drydock-batch-items', 'drydock-maintenance', `drydock-worker-${platform.workerId}`]));
  });
});
