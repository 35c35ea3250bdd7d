import { existsSync, mkdirSync, readFileSync, rmSync, statSync, symlinkSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { startPlatform, type Platform } from './support/platform.js';
import type { ApiClient } from './support/api-client.js';

const BIND_DIR = resolve('var/test-bind');
const DATASETS_DIR = resolve('var/test-datasets');
const STAGE_LIMIT = 1000;

// Session storage modes and datasets (seed 003) against a real Docker engine: a
// per-session host folder for /session, operator datasets mounted read-only at /data or
// staged into /session/data.
describe('Session storage and datasets', () => {
  let platform: Platform;
  let api: ApiClient & { tenantId: string };
  let other: ApiClient & { tenantId: string };

  const run = async (client: ApiClient, sessionId: string, code: string) => {
    const res = await client.execute(sessionId, code);
    expect(res.status).toBe(200);
    return res.body;
  };

  beforeAll(async () => {
    rmSync(DATASETS_DIR, { recursive: true, force: true });
    mkdirSync(join(DATASETS_DIR, 'shared', 'sales', 'q1'), { recursive: true });
    writeFileSync(join(DATASETS_DIR, 'shared', 'sales', 'q1', 'north.csv'), 'region,total\nnorth,10\n');
    writeFileSync(join(DATASETS_DIR, 'shared', 'sales', 'readme.txt'), 'sales figures');
    // A dataset that points out of the registry is not a dataset.
    symlinkSync('/etc', join(DATASETS_DIR, 'shared', 'escape'));
    mkdirSync(join(DATASETS_DIR, 'shared', 'big'));
    writeFileSync(join(DATASETS_DIR, 'shared', 'big', 'data.bin'), Buffer.alloc(STAGE_LIMIT + 1));
    platform = await startPlatform({ SESSION_BIND_DIR: BIND_DIR, DATASETS_DIR, DATASETS_MAX_STAGED_BYTES: String(STAGE_LIMIT) });
    api = await platform.newTenant();
    other = await platform.newTenant();
    mkdirSync(join(DATASETS_DIR, 'tenants', api.tenantId, 'private'), { recursive: true });
    // A link from the shared scope into one tenant's folder is not a shared dataset.
    symlinkSync(join(DATASETS_DIR, 'tenants', api.tenantId, 'private'), join(DATASETS_DIR, 'shared', 'peek'));
    writeFileSync(join(DATASETS_DIR, 'tenants', api.tenantId, 'private', 'secret.txt'), 'only for tenant A');
  });

  afterAll(async () => {
    await platform?.close();
  });

  describe('storage "bind"', () => {
    it('should keep /session in a host folder of the session, sync it as usual, and remove it with the session', async () => {
      const session = await api.createSession({ threadId: 'bind-1', storage: 'bind' });
      expect(session).toMatchObject({ storage: 'bind' });
      const folder = join(BIND_DIR, session.id);
      expect(statSync(folder).uid).toBe(10001);
      expect(statSync(folder).mode & 0o777).toBe(0o700);

      const put = await api.request('PUT', '/v1/threads/bind-1/files/content?path=/in.txt', {
        body: 'from the api',
        headers: { 'content-type': 'application/octet-stream' },
      });
      expect(put.status).toBe(201);
      const result = await run(api, session.id, "open('/session/out.txt', 'w').write(open('/session/in.txt').read().upper())\n'ok'");
      expect(result.status).toBe('ok');
      expect(result.files.changed).toEqual(['/out.txt']);
      expect(readFileSync(join(folder, 'out.txt'), 'utf8')).toBe('FROM THE API');
      expect((await api.get('/v1/threads/bind-1/files/content?path=/out.txt')).body).toBe('FROM THE API');

      expect((await api.delete(`/v1/sessions/${session.id}`)).status).toBe(204);
      expect(existsSync(folder)).toBe(false);
    });
  });

  describe('datasets', () => {
    it('should list the shared datasets and the tenant\'s own, never another tenant\'s or an escaping link', async () => {
      expect((await api.get('/v1/datasets')).body.datasets).toEqual([
        { name: 'big', scope: 'shared' },
        { name: 'private', scope: 'tenant' },
        { name: 'sales', scope: 'shared' },
      ]);
      expect((await other.get('/v1/datasets')).body.datasets).toEqual([
        { name: 'big', scope: 'shared' },
        { name: 'sales', scope: 'shared' },
      ]);
    });

    it('should mount a local_ro dataset read-only at /data/<name>', async () => {
      const session = await api.createSession({ threadId: 'ds-ro', datasets: [{ name: 'sales', mode: 'local_ro' }] });
      expect(session).toMatchObject({ datasets: [{ name: 'sales', mode: 'local_ro' }] });
      const read = await run(api, session.id, "import pandas as pd\nint(pd.read_csv('/data/sales/q1/north.csv')['total'].sum())");
      expect(read.result.text).toBe('10');
      const write = await run(api, session.id, "open('/data/sales/q1/north.csv', 'w').write('tampered')");
      expect(write.status).toBe('error');
      expect(write.error.name).toBe('OSError');
      const create = await run(api, session.id, "open('/data/sales/new.txt', 'w').write('x')");
      expect(create.status).toBe('error');
      expect(readFileSync(join(DATASETS_DIR, 'shared', 'sales', 'q1', 'north.csv'), 'utf8')).toBe('region,total\nnorth,10\n');
    });

    it('should stage a dataset into /session/data/<name> at start and another on request, without making them thread files', async () => {
      const session = await api.createSession({ threadId: 'ds-staged', datasets: [{ name: 'sales', mode: 'staged' }] });
      const listed = await run(
        api,
        session.id,
        "import os\nsorted(os.path.join(d, f) for d, _, fs in os.walk('/session/data') for f in fs)",
      );
      expect(listed.result.text).toBe("['/session/data/sales/q1/north.csv', '/session/data/sales/readme.txt']");

      const staged = await api.post(`/v1/sessions/${session.id}/datasets`, { name: 'private' });
      expect(staged.status).toBe(200);
      expect(staged.body).toEqual({ name: 'private', mode: 'staged', files: 1, bytes: 17 });
      expect((await run(api, session.id, "open('/session/data/private/secret.txt').read()")).result.text).toBe(
        "'only for tenant A'",
      );
      expect((await api.get(`/v1/sessions/${session.id}`)).body.datasets).toEqual([
        { name: 'sales', mode: 'staged' },
        { name: 'private', mode: 'staged' },
      ]);
      // Staged copies are the session's, not the thread's.
      expect((await api.get('/v1/threads/ds-staged/files?path=/')).body.entries).toEqual([]);
    });

    it('should refuse datasets the tenant cannot name with a clear error', async () => {
      const bad = await other.post('/v1/sessions', { threadId: 'ds-bad', datasets: [{ name: 'private', mode: 'staged' }] });
      expect(bad.status).toBe(422);
      expect(bad.body.error.code).toBe('DATASET_NOT_FOUND');
      const escape = await api.post('/v1/sessions', { threadId: 'ds-bad', datasets: [{ name: 'escape', mode: 'local_ro' }] });
      expect(escape.body.error.code).toBe('DATASET_NOT_FOUND');
      const peek = await other.post('/v1/sessions', { threadId: 'ds-bad', datasets: [{ name: 'peek', mode: 'local_ro' }] });
      expect(peek.body.error.code).toBe('DATASET_NOT_FOUND');
      const big = await api.post('/v1/sessions', { threadId: 'ds-bad', datasets: [{ name: 'big', mode: 'staged' }] });
      expect(big.status).toBe(422);
      expect(big.body.error.code).toBe('DATASET_TOO_LARGE');
      const twice = await api.post('/v1/sessions', {
        threadId: 'ds-bad',
        datasets: [
          { name: 'sales', mode: 'staged' },
          { name: 'sales', mode: 'local_ro' },
        ],
      });
      expect(twice.status).toBe(400);
      expect(twice.body.error.code).toBe('DUPLICATE_DATASET');
      const session = await other.createSession({ threadId: 'ds-other' });
      const stage = await other.post(`/v1/sessions/${session.id}/datasets`, { name: 'private' });
      expect(stage.status).toBe(422);
      expect(stage.body.error.code).toBe('DATASET_NOT_FOUND');
      const tooBig = await other.post(`/v1/sessions/${session.id}/datasets`, { name: 'big' });
      expect(tooBig.status).toBe(422);
      expect(tooBig.body.error.code).toBe('DATASET_TOO_LARGE');
      // Too big to copy, but it can be mounted read-only.
      const mounted = await other.createSession({ threadId: 'ds-big-ro', datasets: [{ name: 'big', mode: 'local_ro' }] });
      expect((await run(other, mounted.id, "import os\nos.path.getsize('/data/big/data.bin')")).result.text).toBe(String(STAGE_LIMIT + 1));
      expect((await other.get(`/v1/sessions/${session.id}`)).body.datasets).toEqual([]);
      // Nothing leaked into the container.
      expect((await run(other, session.id, "import os\nos.path.exists('/session/data')")).result.text).toBe('False');
    });
  });
});
