import { startPlatform, type Platform } from './support/platform.js';
import type { ApiClient } from './support/api-client.js';

const files = (thread: string) => `/v1/threads/${thread}/files`;
const q = (path: string) => `?path=${encodeURIComponent(path)}`;

describe('Thread files (REST)', () => {
  let platform: Platform;
  let api: ApiClient;

  beforeAll(async () => {
    platform = await startPlatform({ VFS_MAX_FILE_BYTES: String(1024 * 1024) });
    api = await platform.newTenant();
  });

  afterAll(async () => {
    await platform?.close();
  });

  const put = (client: ApiClient, thread: string, path: string, body: string | Buffer, contentType = 'application/octet-stream') =>
    client.request('PUT', `${files(thread)}/content${q(path)}`, { body, headers: { 'content-type': contentType } });

  it('should store text and binary files and give back the same bytes with a content type', async () => {
    const created = await put(api, 't-bytes', '/data/in.csv', 'a,b\n1,2\n');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ path: '/data/in.csv', size: 8, version: 1 });
    expect((await put(api, 't-bytes', '/data/in.csv', 'a,b\n3,4\n')).status).toBe(200);

    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0x10]);
    expect((await put(api, 't-bytes', '/img/dot.png', png, 'image/png')).status).toBe(201);
    const res = await fetch(`${platform.url}${files('t-bytes')}/content${q('/img/dot.png')}`, {
      headers: { authorization: `Bearer ${(api as unknown as { key: string }).key}` },
    });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(Buffer.from(await res.arrayBuffer()).equals(png)).toBe(true);

    const csv = await api.get(`${files('t-bytes')}/content${q('/data/in.csv')}`);
    expect(csv.headers.get('content-type')).toContain('text/csv');
    expect(csv.body).toBe('a,b\n3,4\n');

    const listing = await api.get(`${files('t-bytes')}${q('/')}`);
    expect(listing.body.entries.map((e: { path: string; type: string }) => [e.path, e.type])).toEqual([
      ['/data', 'directory'],
      ['/img', 'directory'],
    ]);
  });

  it('should page through a 10,000-line file with line numbers right at the page boundaries', async () => {
    const lines = Array.from({ length: 10_000 }, (_, i) => `line ${i + 1}`);
    await put(api, 't-read', '/big.txt', lines.join('\n'));
    const first = (await api.get(`${files('t-read')}/read${q('/big.txt')}`)).body.content.split('\n');
    expect(first).toHaveLength(500);
    expect(first[0]).toBe(`${'1'.padStart(6)}\tline 1`);
    expect(first[499]).toBe(`${'500'.padStart(6)}\tline 500`);
    const next = (await api.get(`${files('t-read')}/read${q('/big.txt')}&offset=500&limit=500`)).body.content.split('\n');
    expect(next[0]).toBe(`${'501'.padStart(6)}\tline 501`);
    const last = (await api.get(`${files('t-read')}/read${q('/big.txt')}&offset=9990&limit=500`)).body.content.split('\n');
    expect(last).toHaveLength(10);
    expect(last[9]).toBe(`${'10000'.padStart(6)}\tline 10000`);
    const past = await api.get(`${files('t-read')}/read${q('/big.txt')}&offset=20000`);
    expect(past.status).toBe(200);
    expect(past.body.content).toContain('10000');
  });

  it('should edit by exact string with clear errors for absent and ambiguous strings', async () => {
    await put(api, 't-edit', '/a.py', 'x = 1\ny = 1\nz = 2\n');
    const absent = await api.post(`${files('t-edit')}/edit`, { path: '/a.py', oldString: 'w = 9', newString: 'w = 0' });
    expect(absent.status).toBe(422);
    expect(absent.body.error.code).toBe('STRING_NOT_FOUND');
    const ambiguous = await api.post(`${files('t-edit')}/edit`, { path: '/a.py', oldString: '= 1', newString: '= 5' });
    expect(ambiguous.status).toBe(422);
    expect(ambiguous.body.error.code).toBe('AMBIGUOUS_MATCH');
    const one = await api.post(`${files('t-edit')}/edit`, { path: '/a.py', oldString: 'z = 2', newString: 'z = 3' });
    expect(one.body).toEqual({ path: '/a.py', occurrences: 1 });
    const all = await api.post(`${files('t-edit')}/edit`, { path: '/a.py', oldString: '= 1', newString: '= 5', replaceAll: true });
    expect(all.body).toEqual({ path: '/a.py', occurrences: 2 });
    expect((await api.get(`${files('t-edit')}/content${q('/a.py')}`)).body).toBe('x = 5\ny = 5\nz = 3\n');
    const missing = await api.post(`${files('t-edit')}/edit`, { path: '/nope.py', oldString: 'a', newString: 'b' });
    expect(missing.body.error.code).toBe('FILE_NOT_FOUND');
  });

  it('should glob with ** and grep in all three modes, literal and regex', async () => {
    await put(api, 't-find', '/src/main.py', 'import os\nprint("hello")\n');
    await put(api, 't-find', '/src/pkg/util.py', 'def hello():\n    return "hello world"\n');
    await put(api, 't-find', '/README.md', 'hello (docs)\n');
    const glob = await api.post(`${files('t-find')}/glob`, { pattern: '**/*.py' });
    expect(glob.body.paths).toEqual(['/src/main.py', '/src/pkg/util.py']);

    const filesMode = await api.post(`${files('t-find')}/grep`, { pattern: 'hello' });
    expect(filesMode.body.files).toEqual(['/README.md', '/src/main.py', '/src/pkg/util.py']);
    const content = await api.post(`${files('t-find')}/grep`, { pattern: 'hello', outputMode: 'content', glob: '**/*.py' });
    expect(content.body.matches).toEqual([
      { path: '/src/main.py', line: 2, text: 'print("hello")' },
      { path: '/src/pkg/util.py', line: 1, text: 'def hello():' },
      { path: '/src/pkg/util.py', line: 2, text: '    return "hello world"' },
    ]);
    const count = await api.post(`${files('t-find')}/grep`, { pattern: 'hello', outputMode: 'count', path: '/src' });
    expect(count.body.counts).toEqual([
      { path: '/src/main.py', count: 1 },
      { path: '/src/pkg/util.py', count: 2 },
    ]);
    // Literal by default: the parenthesis is not regex syntax.
    expect((await api.post(`${files('t-find')}/grep`, { pattern: '(docs)' })).body.files).toEqual(['/README.md']);
    const regex = await api.post(`${files('t-find')}/grep`, { pattern: '^def \\w+\\(', regex: true, outputMode: 'content' });
    expect(regex.body.matches).toEqual([{ path: '/src/pkg/util.py', line: 1, text: 'def hello():' }]);
    const bad = await api.post(`${files('t-find')}/grep`, { pattern: '(unclosed', regex: true });
    expect(bad.status).toBe(400);
    expect(bad.body.error.code).toBe('INVALID_PATTERN');
  });

  it('should return up to maxMatches lines, 1,000 by default, and refuse a maxMatches out of range', async () => {
    await put(api, 't-many', '/log.txt', Array.from({ length: 1500 }, (_, i) => `hit ${i}`).join('\n'));
    const byDefault = await api.post(`${files('t-many')}/grep`, { pattern: 'hit', outputMode: 'content' });
    expect(byDefault.body).toMatchObject({ truncated: true });
    expect(byDefault.body.matches).toHaveLength(1000);
    const raised = await api.post(`${files('t-many')}/grep`, { pattern: 'hit', outputMode: 'content', maxMatches: 2000 });
    expect(raised.body).toMatchObject({ truncated: false });
    expect(raised.body.matches).toHaveLength(1500);
    expect(raised.body.matches.at(-1)).toEqual({ path: '/log.txt', line: 1500, text: 'hit 1499' });
    for (const maxMatches of [0, 100_001, 'many']) {
      const refused = await api.post(`${files('t-many')}/grep`, { pattern: 'hit', maxMatches });
      expect([maxMatches, refused.status, refused.body.error.code]).toEqual([maxMatches, 400, 'VALIDATION_FAILED']);
    }
  });

  it('should answer 422 SEARCH_TIMEOUT to a glob that backtracks without end, and keep serving', async () => {
    // picomatch compiles this to a backtracking regex that never finishes on a 200-byte
    // name; unbounded, it would stall the gateway for every tenant.
    await put(api, 't-glob-bomb', `/names/${'a'.repeat(200)}`, 'x\n');
    const glob = '**/*a*a*a*a*a*a*a*a*b';
    for (const [route, body] of [
      ['glob', { pattern: glob }],
      ['grep', { pattern: 'x', glob }],
    ] as const) {
      const res = await api.post(`${files('t-glob-bomb')}/${route}`, body);
      expect([route, res.status, res.body.error?.code]).toEqual([route, 422, 'SEARCH_TIMEOUT']);
    }
    expect((await api.post(`${files('t-glob-bomb')}/glob`, { pattern: 'names/*' })).body.paths).toHaveLength(1);
  });

  it('should delete files and directories', async () => {
    await put(api, 't-del', '/d/one.txt', '1');
    await put(api, 't-del', '/d/sub/two.txt', '2');
    await put(api, 't-del', '/keep.txt', 'k');
    expect((await api.delete(`${files('t-del')}${q('/d')}`)).status).toBe(204);
    expect((await api.get(`${files('t-del')}/content${q('/d/sub/two.txt')}`)).body.error.code).toBe('FILE_NOT_FOUND');
    expect((await api.get(`${files('t-del')}${q('/')}`)).body.entries.map((e: { path: string }) => e.path)).toEqual(['/keep.txt']);
    expect((await api.delete(`${files('t-del')}${q('/d')}`)).body.error.code).toBe('FILE_NOT_FOUND');
  });

  it('should keep the same path apart across threads and tenants', async () => {
    const other = await platform.newTenant();
    await put(api, 'iso-1', '/notes.md', 'thread one');
    await put(api, 'iso-2', '/notes.md', 'thread two');
    await put(other, 'iso-1', '/notes.md', 'other tenant');
    expect((await api.get(`${files('iso-1')}/content${q('/notes.md')}`)).body).toBe('thread one');
    expect((await api.get(`${files('iso-2')}/content${q('/notes.md')}`)).body).toBe('thread two');
    expect((await other.get(`${files('iso-1')}/content${q('/notes.md')}`)).body).toBe('other tenant');
    expect((await other.get(`${files('iso-2')}/content${q('/notes.md')}`)).body.error.code).toBe('FILE_NOT_FOUND');
    expect((await other.post(`${files('iso-2')}/grep`, { pattern: 'thread' })).body.files).toEqual([]);
  });

  it('should reject path attacks with INVALID_PATH and write nothing', async () => {
    const attacks = ['../../etc/passwd', '/a/../../b', '%2e%2e/%2e%2e/etc/passwd', '/ok/\u0000evil', `/${'x'.repeat(5000)}`, '/a/\u0007bell'];
    for (const path of attacks) {
      const res = await put(api, 't-attack', path, 'pwned');
      expect({ path, status: res.status, code: res.body?.error?.code }).toEqual({ path, status: 400, code: 'INVALID_PATH' });
    }
    // %2e%2e arrives decoded by the URL parser, so it is `..` by the time it is checked.
    const raw = await api.request('PUT', `${files('t-attack')}/content?path=%2e%2e%2f%2e%2e%2fetc%2fpasswd`, {
      body: 'pwned',
      headers: { 'content-type': 'text/plain' },
    });
    expect(raw.body.error.code).toBe('INVALID_PATH');
    expect((await api.get(`${files('t-attack')}${q('/')}`)).body.entries).toEqual([]);
    // A name with dots inside is fine.
    expect((await put(api, 't-attack', '/foo..bar.txt', 'ok')).status).toBe(201);
  });

  it('should refuse files over the size limit and writes over the tenant quota, changing nothing', async () => {
    const small = await platform.newTenant({ vfsBytes: 1000 });
    expect((await put(small, 't-quota', '/a.bin', Buffer.alloc(600))).status).toBe(201);
    const over = await put(small, 't-quota', '/b.bin', Buffer.alloc(600));
    expect(over.status).toBe(429);
    expect(over.body.error.code).toBe('QUOTA_EXCEEDED');
    expect((await small.get(`${files('t-quota')}/content${q('/b.bin')}`)).body.error.code).toBe('FILE_NOT_FOUND');
    // Replacing a file counts only the difference; deleting one frees its bytes.
    expect((await put(small, 't-quota', '/a.bin', Buffer.alloc(900))).status).toBe(200);
    expect((await put(small, 't-quota', '/b.bin', Buffer.alloc(200))).status).toBe(429);
    expect((await small.delete(`${files('t-quota')}${q('/a.bin')}`)).status).toBe(204);
    expect((await put(small, 't-quota', '/b.bin', Buffer.alloc(900))).status).toBe(201);

    const huge = await put(api, 't-quota', '/huge.bin', Buffer.alloc(1024 * 1024 + 1));
    expect(huge.status).toBe(413);
    expect(huge.body.error.code).toBe('FILE_TOO_LARGE');
    expect((await api.get(`${files('t-quota')}/content${q('/huge.bin')}`)).body.error.code).toBe('FILE_NOT_FOUND');
  });

  it('should answer bad thread ids and missing paths with a 4xx', async () => {
    expect((await api.get(`/v1/threads/${encodeURIComponent('../x')}/files`)).status).toBe(400);
    const noPath = await api.get(`${files('t-x')}/content`);
    expect(noPath.status).toBe(400);
    expect(noPath.body.error.code).toBe('VALIDATION_FAILED');
    expect((await platform.anonymous.get(`${files('t-x')}`)).status).toBe(401);
  });
});
