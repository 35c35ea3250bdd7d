import { gzipSync } from 'node:zlib';
import { startPlatform, type Platform } from './support/platform.js';
import type { ApiClient } from './support/api-client.js';

// Every mistake a caller can make gets a 4xx with a stable code and a sentence; none
// of them is a 500.
describe('Bad input', () => {
  let platform: Platform;
  let api: ApiClient;
  let sessionId: string;

  beforeAll(async () => {
    platform = await startPlatform();
    api = await platform.newTenant();
    sessionId = (await api.createSession()).id;
  });

  afterAll(async () => {
    await platform?.close();
  });

  const expectError = (res: { status: number; body: any }, status: number, code: string) => {
    expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status, code });
    expect(typeof res.body.error.message).toBe('string');
    expect(res.body.error.message.length).toBeGreaterThan(10);
  };

  describe('authentication', () => {
    it('should answer 401 UNAUTHORIZED without a key', async () => {
      expectError(await platform.anonymous.get('/v1/sessions'), 401, 'UNAUTHORIZED');
      expectError(await platform.anonymous.request('GET', '/v1/sessions', { headers: { authorization: 'Basic abc' } }), 401, 'UNAUTHORIZED');
    });

    it('should answer 401 INVALID_API_KEY for an unknown, malformed or revoked key', async () => {
      expectError(await api.withKey('ddk_not-a-real-key').get('/v1/sessions'), 401, 'INVALID_API_KEY');
      expectError(await api.withKey('x'.repeat(5000)).get('/v1/sessions'), 401, 'INVALID_API_KEY');
      const tenant = await platform.newTenant();
      const rotated = await platform.admin.post(`/admin/tenants/${tenant.tenantId}/keys`);
      expect(rotated.status).toBe(201);
      expectError(await tenant.get('/v1/sessions'), 401, 'INVALID_API_KEY');
      expect((await tenant.withKey(rotated.body.apiKey).get('/v1/sessions')).status).toBe(200);
    });

    it('should keep tenant keys out of the admin API and the admin key out of nothing else', async () => {
      expectError(await api.get('/admin/tenants'), 401, 'INVALID_ADMIN_KEY');
      expectError(await platform.admin.withKey('wrong-admin-key-but-long-enough').get('/admin/tenants'), 401, 'INVALID_ADMIN_KEY');
      expectError(await platform.admin.get('/v1/sessions'), 401, 'INVALID_API_KEY');
    });
  });

  describe('executions', () => {
    it('should reject a missing or empty code with VALIDATION_FAILED', async () => {
      expectError(await api.post(`/v1/sessions/${sessionId}/executions`, {}), 400, 'VALIDATION_FAILED');
      expectError(await api.post(`/v1/sessions/${sessionId}/executions`, { code: '' }), 400, 'VALIDATION_FAILED');
    });

    it('should reject wrong types with VALIDATION_FAILED', async () => {
      expectError(await api.post(`/v1/sessions/${sessionId}/executions`, { code: 42 }), 400, 'VALIDATION_FAILED');
      expectError(await api.post(`/v1/sessions/${sessionId}/executions`, { code: ['x'] }), 400, 'VALIDATION_FAILED');
      expectError(await api.post(`/v1/sessions/${sessionId}/executions`, { code: '1', timeoutMs: 'soon' }), 400, 'VALIDATION_FAILED');
      expectError(await api.post(`/v1/sessions/${sessionId}/executions`, { code: '1', timeoutMs: -5 }), 400, 'VALIDATION_FAILED');
      expectError(await api.post(`/v1/sessions/${sessionId}/executions`, { code: '1', idempotencyKey: 'has space' }), 400, 'VALIDATION_FAILED');
      const listed = await api.post(`/v1/sessions/${sessionId}/executions`, { code: 1 });
      expect(listed.body.error.details.problems.join(' ')).toContain('code');
    });

    it('should reject a body that is not JSON with INVALID_JSON', async () => {
      const res = await api.request('POST', `/v1/sessions/${sessionId}/executions`, {
        body: '{"code": ',
        headers: { 'content-type': 'application/json' },
      });
      expectError(res, 400, 'INVALID_JSON');
    });

    it('should reject JSON that is not an object or an array, has a prototype key, is in another charset, or compressed', async () => {
      const post = (body: string | Buffer, headers: Record<string, string>) =>
        api.request('POST', `/v1/sessions/${sessionId}/executions`, { body, headers });
      expectError(await post('"print(1)"', { 'content-type': 'application/json' }), 400, 'INVALID_JSON');
      // A prototype key, which a later merge of the body could turn into a prototype change.
      expectError(await post('{"code": "print(1)", "__proto__": {"admin": true}}', { 'content-type': 'application/json' }), 400, 'INVALID_JSON');
      expectError(await post('{"code": "print(1)", "constructor": {"prototype": {"admin": true}}}', { 'content-type': 'application/json' }), 400, 'INVALID_JSON');
      expectError(await post('{"code": "1"}', { 'content-type': 'application/json; charset=latin1' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      expectError(await post(gzipSync('{"code": "1"}'), { 'content-type': 'application/json', 'content-encoding': 'gzip' }), 415, 'UNSUPPORTED_MEDIA_TYPE');
      // Whereas JSON typed as a +json suffix, in UTF-8 named either way, is read.
      const ok = await post('{"code": "print(1)"}', { 'content-type': 'application/vnd.drydock+json; charset=UTF-8' });
      expect({ status: ok.status, stdout: ok.body.stdout }).toEqual({ status: 200, stdout: '1\n' });
    });

    it('should route a trailing slash as the route without it, and refuse an over-long path parameter', async () => {
      expect((await api.get('/v1/sessions/')).status).toBe(200);
      expectError(await api.get(`/v1/sessions/${'s'.repeat(2000)}`), 414, 'URL_TOO_LONG');
    });

    it('should reject a huge body with 413 BODY_TOO_LARGE', async () => {
      const res = await api.post(`/v1/sessions/${sessionId}/executions`, { code: `x = "${'a'.repeat(3 * 1024 * 1024)}"` });
      expectError(res, 413, 'BODY_TOO_LARGE');
    });

    it('should answer 404 for an unknown session or execution', async () => {
      expectError(await api.post('/v1/sessions/ses_doesnotexist/executions', { code: '1' }), 404, 'SESSION_NOT_FOUND');
      expectError(await api.get('/v1/executions/exe_doesnotexist'), 404, 'EXECUTION_NOT_FOUND');
      expectError(await api.get(`/v1/sessions/${'%27%3B--'}`), 404, 'SESSION_NOT_FOUND');
      expectError(await api.get('/v1/sessions/%FF'), 400, 'INVALID_URL');
    });
  });

  describe('sessions', () => {
    it('should reject malformed session requests', async () => {
      expectError(await api.post('/v1/sessions', { threadId: '../etc' }), 400, 'VALIDATION_FAILED');
      expectError(await api.post('/v1/sessions', { threadId: 'x'.repeat(500) }), 400, 'VALIDATION_FAILED');
      expectError(await api.post('/v1/sessions', { limits: { memoryMb: 'lots' } }), 400, 'VALIDATION_FAILED');
      expectError(await api.post('/v1/sessions', { limits: { memoryMb: 1 } }), 400, 'VALIDATION_FAILED');
      expectError(await api.post('/v1/sessions', { storage: 'nfs' }), 400, 'VALIDATION_FAILED');
      expectError(await api.post('/v1/sessions', { datasets: 'sales' }), 400, 'VALIDATION_FAILED');
      expectError(await api.post('/v1/sessions', { datasets: [{ name: '../etc', mode: 'local_ro' }] }), 400, 'VALIDATION_FAILED');
      expectError(await api.post('/v1/sessions', { datasets: [{ name: 'sales', mode: 'rw' }] }), 400, 'VALIDATION_FAILED');
    });

    it('should refuse network access and unsupported options with a clear code', async () => {
      expectError(await api.post('/v1/sessions', { network: true }), 403, 'NETWORK_FORBIDDEN');
      // This platform was started without SESSION_BIND_DIR or DATASETS_DIR.
      expectError(await api.post('/v1/sessions', { storage: 'bind' }), 422, 'STORAGE_NOT_AVAILABLE');
      expectError(
        await api.post('/v1/sessions', { datasets: [{ name: 'sales', mode: 'staged' }] }),
        422,
        'DATASETS_NOT_CONFIGURED',
      );
    });

    it('should answer 429 when a tenant reaches its session maximum', async () => {
      const limited = await platform.newTenant({ maxSessions: 1 });
      await limited.createSession({ threadId: 'one' });
      expectError(await limited.post('/v1/sessions', { threadId: 'two' }), 429, 'SESSION_QUOTA_EXCEEDED');
      // The thread that already has a session still gets it back.
      expect((await limited.post('/v1/sessions', { threadId: 'one' })).status).toBe(200);
    });
  });

  describe('admin', () => {
    it('should validate tenant bodies and answer 404 for unknown tenants', async () => {
      expectError(await platform.admin.post('/admin/tenants', {}), 400, 'VALIDATION_FAILED');
      expectError(await platform.admin.post('/admin/tenants', { name: 'x', limits: { memoryMb: 'a' } }), 400, 'VALIDATION_FAILED');
      expectError(await platform.admin.get('/admin/tenants/ten_unknown'), 404, 'TENANT_NOT_FOUND');
      expectError(await platform.admin.request('PATCH', '/admin/tenants/ten_unknown', { json: { limits: {} } }), 404, 'TENANT_NOT_FOUND');
      expectError(await platform.admin.delete('/admin/sessions/ses_unknown'), 404, 'SESSION_NOT_FOUND');
    });

    it('should answer unknown routes with 404 ROUTE_NOT_FOUND', async () => {
      expectError(await api.get('/v1/nothing-here'), 404, 'ROUTE_NOT_FOUND');
    });
  });
});
