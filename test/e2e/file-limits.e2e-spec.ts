import { gzipSync } from 'node:zlib';
import { DataSource } from 'typeorm';
import { tarOf, type TarEntry } from '../support/tar-archive.js';
import { startPlatform, type Platform } from './support/platform.js';
import type { ApiClient } from './support/api-client.js';

const files = (thread: string) => `/v1/threads/${thread}/files`;
const q = (path: string) => `?path=${encodeURIComponent(path)}`;
const MAX_ARCHIVE_ENTRIES = 5000;

// Issue 57: a 1.4 MB .tar.gz of 200,000 empty files was written whole, and the thread's
// next session did not start. An archive holds at most VFS_MAX_ARCHIVE_ENTRIES entries,
// a thread at most its tenant's maxFilesPerThread files, on every way in.
describe('Thread file limits', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ VFS_MAX_ARCHIVE_ENTRIES: String(MAX_ARCHIVE_ENTRIES) });
  });

  afterAll(async () => {
    await platform?.close();
  });

  // Empty files named as a tool would pack a tree: a hundred folders.
  const emptyFiles = (n: number, from = 0): TarEntry[] =>
    Array.from({ length: n }, (_, i) => ({ name: `d${(from + i) % 100}/f${from + i}.txt`, body: '' }));
  const upload = (api: ApiClient, thread: string, archive: Buffer) =>
    api.request('POST', `${files(thread)}/archive`, { body: archive, headers: { 'content-type': 'application/gzip' } });
  const put = (api: ApiClient, thread: string, path: string, body: string) =>
    api.request('PUT', `${files(thread)}/content${q(path)}`, { body, headers: { 'content-type': 'application/octet-stream' } });
  const rowsOf = async (tenantId: string, thread: string) => {
    const [row] = await platform.gateway
      .get(DataSource)
      .query(`SELECT count(*)::int AS n FROM thread_files WHERE tenant_id = $1 AND thread_id = $2 AND NOT deleted`, [tenantId, thread]);
    return row.n as number;
  };
  const setLimits = async (tenantId: string, limits: Record<string, number>) => {
    const res = await platform.admin.request('PATCH', `/admin/tenants/${tenantId}`, { json: { limits } });
    expect(res.status).toBe(200);
  };

  it('should refuse an archive of more entries than VFS_MAX_ARCHIVE_ENTRIES with 413 ARCHIVE_TOO_MANY_ENTRIES, writing nothing', async () => {
    const api = await platform.newTenant();
    const many = gzipSync(await tarOf(emptyFiles(MAX_ARCHIVE_ENTRIES + 1)));
    const refused = await upload(api, 't-many', many);
    expect(refused.status).toBe(413);
    expect(refused.body.error).toMatchObject({ code: 'ARCHIVE_TOO_MANY_ENTRIES', details: { max: MAX_ARCHIVE_ENTRIES } });
    expect(refused.body.error.message).toContain(`${MAX_ARCHIVE_ENTRIES} entries`);
    expect(await rowsOf(api.tenantId, 't-many')).toBe(0);
    expect((await api.get(`${files('t-many')}${q('/')}`)).body.entries).toEqual([]);

    // Directories count as entries too; the limit itself is allowed.
    const atLimit = gzipSync(await tarOf([{ name: 'd0/', type: 'directory' }, ...emptyFiles(MAX_ARCHIVE_ENTRIES - 1)]));
    const ok = await upload(api, 't-many', atLimit);
    expect(ok.status).toBe(201);
    expect(ok.body).toMatchObject({ written: MAX_ARCHIVE_ENTRIES - 1, created: MAX_ARCHIVE_ENTRIES - 1 });
  }, 180_000);

  it("should hold a thread to its tenant's maxFilesPerThread on every write with 422 TOO_MANY_FILES", async () => {
    const api = await platform.newTenant({ maxFilesPerThread: 3 });
    expect((await put(api, 't-few', '/a.txt', 'a')).status).toBe(201);
    expect((await put(api, 't-few', '/b.txt', 'b')).status).toBe(201);

    const archive = gzipSync(await tarOf([{ name: 'c.txt', body: 'c' }, { name: 'd.txt', body: 'd' }]));
    const refusedArchive = await upload(api, 't-few', archive);
    expect(refusedArchive.status).toBe(422);
    expect(refusedArchive.body.error).toMatchObject({ code: 'TOO_MANY_FILES', details: { total: 4, max: 3 } });
    expect(await rowsOf(api.tenantId, 't-few')).toBe(2);

    expect((await put(api, 't-few', '/c.txt', 'c')).status).toBe(201);
    const refused = await put(api, 't-few', '/d.txt', 'd');
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'TOO_MANY_FILES', details: { total: 4, max: 3 } });
    expect(refused.body.error.message).toContain('/d.txt');

    // Replacing and editing add no file; another thread has its own count; a delete
    // frees a place; a raised limit lets more in.
    expect((await put(api, 't-few', '/a.txt', 'a2')).status).toBe(200);
    const edit = await api.post(`${files('t-few')}/edit`, { path: '/a.txt', oldString: 'a2', newString: 'a3' });
    expect(edit.status).toBe(200);
    expect((await put(api, 't-other', '/d.txt', 'd')).status).toBe(201);
    expect((await api.delete(`${files('t-few')}${q('/b.txt')}`)).status).toBe(204);
    expect((await put(api, 't-few', '/d.txt', 'd')).status).toBe(201);
    await setLimits(api.tenantId, { maxFilesPerThread: 4 });
    expect((await put(api, 't-few', '/e.txt', 'e')).status).toBe(201);
    expect(await rowsOf(api.tenantId, 't-few')).toBe(4);
  });

  it('should mirror the files a run makes up to the limit, report the others as too-many-files and keep the session usable', async () => {
    const api = await platform.newTenant({ maxFilesPerThread: 5 });
    expect((await put(api, 't-run', '/in/a.txt', 'a')).status).toBe(201);
    expect((await put(api, 't-run', '/in/b.txt', 'b')).status).toBe(201);
    const session = await api.createSession({ threadId: 't-run' });
    const run = await api.execute(
      session.id,
      [
        'import os',
        "os.makedirs('/session/out', exist_ok=True)",
        "for i in range(10): open(f'/session/out/{i}.txt', 'w').write(str(i))",
        "open('/session/in/a.txt', 'w').write('changed')",
      ].join('\n'),
    );
    expect(run.status).toBe(200);
    expect(run.body.status).toBe('ok');
    const { changed, skipped } = run.body.files as { changed: string[]; skipped: { path: string; reason: string }[] };
    expect(changed).toContain('/in/a.txt');
    expect(changed.filter((p) => p.startsWith('/out/'))).toHaveLength(3);
    expect(skipped).toHaveLength(7);
    expect(new Set(skipped.map((s) => s.reason))).toEqual(new Set(['too-many-files']));
    expect(await rowsOf(api.tenantId, 't-run')).toBe(5);
    expect((await api.get(`${files('t-run')}/content${q('/in/a.txt')}`)).body).toBe('changed');

    // The thread and the session go on: a delete frees a place for the next run's file.
    expect((await api.delete(`${files('t-run')}${q('/in/b.txt')}`)).status).toBe(204);
    const next = await api.execute(session.id, "open('/session/late.txt', 'w').write('late')\nlen(os.listdir('/session/out'))");
    expect(next.body).toMatchObject({ status: 'ok', result: { text: '10' }, files: { changed: ['/late.txt'], skipped: [] } });
  });

  // The thread's files are all pushed into /session before the session is ready.
  it('should start a session on a thread at its file limit with every file in /session', async () => {
    const limit = 4 * MAX_ARCHIVE_ENTRIES;
    const api = await platform.newTenant({ maxFilesPerThread: limit, requestsPerMinute: 100_000 });
    for (let part = 0; part < 4; part++) {
      const res = await upload(api, 't-full', gzipSync(await tarOf(emptyFiles(MAX_ARCHIVE_ENTRIES, part * MAX_ARCHIVE_ENTRIES))));
      expect(res.status).toBe(201);
    }
    expect((await put(api, 't-full', '/one-more.txt', 'x')).body.error).toMatchObject({ code: 'TOO_MANY_FILES' });

    const created = await api.post('/v1/sessions', { threadId: 't-full' });
    expect(created.status).toBe(201);
    expect(created.body.status).toBe('ready');
    const counted = await api.execute(created.body.id, "import os\nsum(len(fs) for _, _, fs in os.walk('/session'))");
    expect(counted.body).toMatchObject({ status: 'ok', result: { text: String(limit) }, files: { changed: [], skipped: [] } });
  }, 300_000);
});
