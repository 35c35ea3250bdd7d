import { createHash } from 'node:crypto';
import { gzipSync } from 'node:zlib';
import { DataSource } from 'typeorm';
import { tarOf } from '../support/tar-archive.js';
import { startPlatform, type Platform } from './support/platform.js';
import type { ApiClient } from './support/api-client.js';

const files = (thread: string) => `/v1/threads/${thread}/files`;
const q = (path: string) => `?path=${encodeURIComponent(path)}`;
const MAX_ARCHIVE_BYTES = 4 * 1024 * 1024;


describe('Thread files (REST)', () => {
  let platform: Platform;
  let api: ApiClient & { tenantId: string };

  beforeAll(async () => {
    platform = await startPlatform({ VFS_MAX_FILE_BYTES: String(1024 * 1024), VFS_MAX_ARCHIVE_BYTES: String(MAX_ARCHIVE_BYTES) });
    api = await platform.newTenant();
  });

  afterAll(async () => {
    await platform?.close();
  });

  const put = (client: ApiClient, thread: string, path: string, body: string | Buffer, contentType = 'application/octet-stream') =>
    client.request('PUT', `${files(thread)}/content${q(path)}`, { body, headers: { 'content-type': contentType } });
  // A file's content as bytes (the client decodes bodies as text).
  const download = (thread: string, path: string) =>
    fetch(`${platform.url}${files(thread)}/content${q(path)}`, { headers: { authorization: `Bearer ${(api as unknown as { key: string }).key}` } });

  it('should store text and binary files and give back the same bytes with a content type', async () => {
    const created = await put(api, 't-bytes', '/data/in.csv', 'a,b\n1,2\n');
    expect(created.status).toBe(201);
    expect(created.body).toMatchObject({ path: '/data/in.csv', size: 8, version: 1 });
    expect((await put(api, 't-bytes', '/data/in.csv', 'a,b\n3,4\n')).status).toBe(200);

    const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff, 0x10]);
    expect((await put(api, 't-bytes', '/img/dot.png', png, 'image/png')).status).toBe(201);
    const res = await download('t-bytes', '/img/dot.png');
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

  // Text goes to PostgreSQL as the bytes that came (never decoded on the way), so what
  // Node's UTF-8 check lets through as text, PostgreSQL must store as text as it is. A
  // .txt file's guessed type says which it became: text/plain with a charset for text.
  it('should store every UTF-8 body as searchable text with its exact bytes, and any other body as binary', async () => {
    const TEXT = 'text/plain; charset=utf-8';
    const BINARY = 'text/plain';
    const utf8 = {
      '/u/two-byte.txt': 'U+0080 \u0080 and \u00e9\n',
      '/u/astral.txt': 'clef \u{1d11e} and \u{1f600}\r\nsecond line\n',
      '/u/nonchars.txt': 'U+FFFE \ufffe U+FFFF \uffff U+10FFFF \u{10ffff}\n',
      '/u/bom.txt': '\ufeffstarts with a BOM\n',
    };
    const notUtf8 = {
      '/b/surrogate.txt': Buffer.from([0x61, 0xed, 0xa0, 0x80, 0x0a]),
      '/b/overlong.txt': Buffer.from([0x61, 0xc0, 0xaf, 0x0a]),
      '/b/past-10ffff.txt': Buffer.from([0x61, 0xf4, 0x90, 0x80, 0x80, 0x0a]),
      '/b/cut-short.txt': Buffer.from([0x61, 0xe2, 0x82]),
      '/b/nul.txt': Buffer.from('a\u0000b\n'),
    };
    const all = [
      ...Object.entries(utf8).map(([path, text]) => ({ path, bytes: Buffer.from(text, 'utf8'), type: TEXT })),
      ...Object.entries(notUtf8).map(([path, bytes]) => ({ path, bytes, type: BINARY })),
    ];
    for (const { path, bytes, type } of all) {
      const res = await put(api, 't-utf8', path, bytes);
      expect([path, res.status, res.body.contentType]).toEqual([path, 201, type]);
      const back = await download('t-utf8', path);
      expect([path, Buffer.from(await back.arrayBuffer()).toString('hex')]).toEqual([path, bytes.toString('hex')]);
    }
    // Stored as text: PostgreSQL searches it (the astral line, shown without its \r).
    const grep = await api.post(`${files('t-utf8')}/grep`, { pattern: '\u{1f600}', outputMode: 'content' });
    expect(grep.body.matches).toEqual([{ path: '/u/astral.txt', line: 1, text: 'clef \u{1d11e} and \u{1f600}' }]);
    // The same through an archive, whose entries are Buffers too.
    const archive = await tarOf([
      { name: 'a/astral.txt', body: Buffer.from(utf8['/u/astral.txt'], 'utf8') },
      { name: 'a/surrogate.txt', body: notUtf8['/b/surrogate.txt'] },
    ]);
    const unpacked = await api.request('POST', `${files('t-utf8')}/archive`, { body: archive, headers: { 'content-type': 'application/x-tar' } });
    expect(unpacked.status).toBe(201);
    for (const [path, type] of [['/a/astral.txt', TEXT], ['/a/surrogate.txt', BINARY]]) {
      expect([path, (await download('t-utf8', path)).headers.get('content-type')]).toEqual([path, type]);
    }
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

  // A gateway keeps the texts of large files it read last (RecentTexts), and uses one
  // only after PostgreSQL confirmed the file still has that sha256: a change made by any
  // process (here an UPDATE standing for another gateway's write) is seen at once.
  it('should page through a large file it read before and see every change to it, from any process, at once', async () => {
    const version = (v: string) => Array.from({ length: 4000 }, (_, i) => `${v} line ${i + 1} ${'-'.repeat(40)}`).join('\n');
    const page = async (client: ApiClient, thread: string) => {
      const res = await client.get(`${files(thread)}/read${q('/big.md')}&offset=1000&limit=2`);
      return res.status === 200 ? (res.body.content as string) : res.body.error.code;
    };
    const line = (v: string, n: number) => `${String(n).padStart(6)}\t${v} line ${n} ${'-'.repeat(40)}`;
    await put(api, 't-kept', '/big.md', version('v1'));
    expect(await page(api, 't-kept')).toBe(`${line('v1', 1001)}\n${line('v1', 1002)}`);
    expect(await page(api, 't-kept')).toBe(`${line('v1', 1001)}\n${line('v1', 1002)}`);
    await put(api, 't-kept', '/big.md', version('v2'));
    expect(await page(api, 't-kept')).toBe(`${line('v2', 1001)}\n${line('v2', 1002)}`);

    const v3 = version('v3');
    await platform.gateway.get(DataSource).query(
      `UPDATE thread_files SET text_content = $2, size = $3, sha256 = $4
        WHERE tenant_id = $1 AND thread_id = 't-kept' AND path = '/big.md'`,
      [api.tenantId, v3, Buffer.byteLength(v3), createHash('sha256').update(v3).digest('hex')],
    );
    expect(await page(api, 't-kept')).toBe(`${line('v3', 1001)}\n${line('v3', 1002)}`);

    // Another tenant's file at the same thread and path is its own.
    const other = await platform.newTenant();
    await put(other, 't-kept', '/big.md', version('other'));
    expect(await page(other, 't-kept')).toBe(`${line('other', 1001)}\n${line('other', 1002)}`);
    expect(await page(api, 't-kept')).toBe(`${line('v3', 1001)}\n${line('v3', 1002)}`);

    expect((await api.delete(`${files('t-kept')}${q('/big.md')}`)).status).toBe(204);
    expect(await page(api, 't-kept')).toBe('FILE_NOT_FOUND');
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
    // The service serializes the answer itself (VfsService.grepJson): it must still be JSON.
    expect([byDefault.status, byDefault.headers.get('content-type')]).toEqual([200, 'application/json; charset=utf-8']);
    expect(byDefault.body).toMatchObject({ truncated: true, note: expect.stringContaining('first 1000 matching lines') });
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

  // Content and count grep read 500 files per statement, two at once, and stop testing
  // whole files before splitting them once most files of a statement matched: files
  // 0-999 all match, so the third statement (files 1000-1499) runs without the test.
  // Where a statement finds few matching files (the pattern "other", only in the odd
  // files from 1000 on), the files after it are tested in two path ranges at once, and
  // only the matching ones split; files mode always tests in ranges, and count mode
  // does once it has counted maxMatches files. The answer must not change: a literal, a case-insensitive one, a
  // regex that could match across lines (\s) and one that matches an empty line (no
  // phantom line after the final newline).
  it('should find the same lines, counts and files in every way grep splits its statements', async () => {
    const lines = (i: number) => (i < 1000 || i % 2 === 0 ? [`alpha ${i}`, `Beta ${i}`, '', 'gamma\tdelta', 'end'] : ['other', 'lines']);
    const entries = Array.from({ length: 1500 }, (_, i) => ({ name: `m/${String(i).padStart(4, '0')}.txt`, body: `${lines(i).join('\n')}\n` }));
    const uploaded = await api.request('POST', `${files('t-statements')}/archive`, {
      body: await tarOf(entries),
      headers: { 'content-type': 'application/x-tar' },
    });
    expect(uploaded.status).toBe(201);
    const expected = (match: (line: string) => boolean) =>
      entries.flatMap((e, i) =>
        lines(i).flatMap((text, n) => (match(text) ? [{ path: `/${e.name}`, line: n + 1, text }] : [])),
      );
    const cases: [Record<string, unknown>, (line: string) => boolean][] = [
      [{ pattern: 'alpha' }, (l) => l.includes('alpha')],
      [{ pattern: 'BETA', caseInsensitive: true }, (l) => l.toLowerCase().includes('beta')],
      [{ pattern: 'gamma\\sdelta', regex: true }, (l) => /gamma\sdelta/.test(l)],
      [{ pattern: '^$', regex: true }, (l) => l === ''],
      // Only in the odd files from 1000 on: the first statements find few matches.
      [{ pattern: 'other' }, (l) => l.includes('other')],
    ];
    const grep = (query: Record<string, unknown>) => api.post(`${files('t-statements')}/grep`, query);
    for (const [query, match] of cases) {
      const found = expected(match);
      const res = await grep({ ...query, outputMode: 'content', maxMatches: 100_000 });
      expect([query, res.status, res.body.truncated]).toEqual([query, 200, false]);
      expect(res.body.matches).toEqual(found);
      // Cut in the second statement's files (or not cut, for "other").
      const cut = await grep({ ...query, outputMode: 'content', maxMatches: 700 });
      expect([query, cut.body.truncated, cut.body.matches]).toEqual([query, found.length > 700, found.slice(0, 700)]);

      const counts: { path: string; count: number }[] = [];
      for (const { path } of found) {
        if (counts.at(-1)?.path === path) counts.at(-1)!.count++;
        else counts.push({ path, count: 1 });
      }
      const paths = counts.map((c) => c.path);
      const all = await grep({ ...query, outputMode: 'count', maxMatches: 100_000 });
      expect([query, all.status, all.body.truncated, all.body.counts]).toEqual([query, 200, false, counts]);
      const listed = await grep({ ...query, outputMode: 'files_with_matches', maxMatches: 100_000 });
      expect([query, listed.status, listed.body.truncated, listed.body.files]).toEqual([query, 200, false, paths]);
      // Counting by statement stops after the first (100, 300) or the first two (600),
      // or, for a pattern in few files, after the first: the files after it are tested
      // in path ranges, and lines counted in those still under maxMatches.
      for (const maxMatches of [100, 300, 600]) {
        const first = await grep({ ...query, outputMode: 'count', maxMatches });
        const truncated = counts.length > maxMatches;
        expect([query, maxMatches, first.body.truncated, first.body.counts]).toEqual([query, maxMatches, truncated, counts.slice(0, maxMatches)]);
        expect([query, maxMatches, first.body.note ?? null]).toEqual([
          query,
          maxMatches,
          truncated ? expect.stringContaining(`first ${maxMatches} of ${counts.length} matching files`) : null,
        ]);
      }
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

  describe('archive upload', () => {
    const upload = (client: ApiClient, thread: string, body: Buffer, options: { path?: string; type?: string; encoding?: string } = {}) =>
      client.request('POST', `${files(thread)}/archive${options.path === undefined ? '' : q(options.path)}`, {
        body,
        headers: { 'content-type': options.type ?? 'application/x-tar', ...(options.encoding ? { 'content-encoding': options.encoding } : {}) },
      });
    const listing = async (client: ApiClient, thread: string) =>
      (await client.post(`${files(thread)}/glob`, { pattern: '**' })).body.paths as string[];

    it('should write every file of a tar under the folder in one revision, byte for byte', async () => {
      const png = Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x0d, 0x0a, 0x1a, 0x0a, 0x00, 0xff]);
      const archive = await tarOf([
        { name: 'src/', type: 'directory' },
        { name: 'src/main.py', body: 'print("hi")\n' },
        { name: './img/dot.png', body: png },
        { name: 'docs/naïve.md', body: '# ünïcode\n' },
      ]);
      const res = await upload(api, 't-archive', archive, { path: '/proj' });
      expect(res.status).toBe(201);
      expect(res.body).toEqual({ path: '/proj', written: 3, created: 3, bytes: 12 + png.length + Buffer.byteLength('# ünïcode\n'), revision: expect.any(Number) });
      expect(await listing(api, 't-archive')).toEqual(['/proj/docs/naïve.md', '/proj/img/dot.png', '/proj/src/main.py']);
      const stat = await api.get(`${files('t-archive')}/stat${q('/proj/src/main.py')}`);
      expect(stat.body).toMatchObject({ contentType: 'text/x-python; charset=utf-8', size: 12, version: 1 });
      const bytes = await download('t-archive', '/proj/img/dot.png');
      expect(bytes.headers.get('content-type')).toBe('image/png');
      expect(Buffer.from(await bytes.arrayBuffer()).equals(png)).toBe(true);

      // Again, gzipped: every file replaced (200), all in one newer revision.
      const again = await upload(api, 't-archive', gzipSync(await tarOf([{ name: 'src/main.py', body: 'print(2)\n' }, { name: 'docs/naïve.md', body: 'v2\n' }])), {
        path: '/proj',
        type: 'application/gzip',
      });
      expect(again.status).toBe(200);
      expect(again.body).toMatchObject({ written: 2, created: 0, bytes: 12 });
      expect(again.body.revision).toBe(res.body.revision + 1);
      expect((await api.get(`${files('t-archive')}/content${q('/proj/src/main.py')}`)).body).toBe('print(2)\n');
      // application/x-tar with Content-Encoding: gzip is the same thing.
      const encoded = await upload(api, 't-archive', gzipSync(await tarOf([{ name: 'c.txt', body: 'c' }])), { encoding: 'gzip' });
      expect(encoded.status).toBe(201);
      expect((await api.get(`${files('t-archive')}/content${q('/c.txt')}`)).body).toBe('c');
    });

    it('should write 2,000 files from one archive', async () => {
      const entries: { name: string; body: string | Buffer }[] = Array.from({ length: 2000 }, (_, i) => ({ name: `many/d${i % 10}/f${i}.txt`, body: `file ${i}\n` }));
      // Binary files among them, in more than one of the store's 500-row statements.
      const bytes = (i: number) => Buffer.from([0x00, 0xff, 0x5c, 0x22, 0x7b, i & 0xff, 0x0a]);
      for (const i of [3, 777, 1998]) entries[i] = { name: `many/bin/b${i}.dat`, body: bytes(i) };
      const res = await upload(api, 't-archive-many', await tarOf(entries));
      expect(res.status).toBe(201);
      expect(res.body).toMatchObject({ path: '/', written: 2000, created: 2000 });
      expect(await listing(api, 't-archive-many')).toHaveLength(2000);
      expect((await api.get(`${files('t-archive-many')}/content${q('/many/d7/f1997.txt')}`)).body).toBe('file 1997\n');
      for (const i of [3, 777, 1998]) {
        const got = await download('t-archive-many', `/many/bin/b${i}.dat`);
        expect([i, got.status, Buffer.from(await got.arrayBuffer())]).toEqual([i, 200, bytes(i)]);
      }
    });

    it('should refuse a bad archive with a 4xx and a stable code, writing none of its files', async () => {
      const thread = 't-archive-bad';
      await put(api, thread, '/taken', 'a file');
      const good = { name: 'good.txt', body: 'would be written first' };
      const big = Buffer.alloc(1024 * 1024 + 1, 1);
      const cases: [string, () => Promise<{ status: number; body: any }>, number, string][] = [
        ['symlink', () => tarOf([good, { name: 'link', type: 'symlink', linkname: '/etc/passwd' }]).then((b) => upload(api, thread, b)), 400, 'UNSUPPORTED_ARCHIVE_ENTRY'],
        ['hard link', () => tarOf([good, { name: 'hard', type: 'link', linkname: 'good.txt' }]).then((b) => upload(api, thread, b)), 400, 'UNSUPPORTED_ARCHIVE_ENTRY'],
        ['..', () => tarOf([good, { name: '../escape.txt', body: 'x' }]).then((b) => upload(api, thread, b, { path: '/in' })), 400, 'INVALID_PATH'],
        ['bad folder', () => tarOf([good]).then((b) => upload(api, thread, b, { path: '/../x' })), 400, 'INVALID_PATH'],
        ['not a tar', () => upload(api, thread, Buffer.from('just text, not an archive '.repeat(40))), 400, 'INVALID_ARCHIVE'],
        ['cut short', () => tarOf([good, { name: 'b.txt', body: 'y'.repeat(5000) }]).then((b) => upload(api, thread, b.subarray(0, 2048))), 400, 'INVALID_ARCHIVE'],
        ['empty body', () => upload(api, thread, Buffer.alloc(0)), 400, 'INVALID_ARCHIVE'],
        ['over a file', () => tarOf([good, { name: 'taken/inner.txt', body: 'x' }]).then((b) => upload(api, thread, b)), 409, 'FILE_EXISTS'],
        ['twice', () => tarOf([good, { name: './good.txt', body: 'x' }]).then((b) => upload(api, thread, b)), 400, 'INVALID_PATH'],
        ['file too large', () => tarOf([good, { name: 'big.bin', body: big }]).then((b) => upload(api, thread, b)), 413, 'FILE_TOO_LARGE'],
        [
          'body too large',
          () => tarOf([good, ...Array.from({ length: 5 }, (_, i) => ({ name: `part${i}.bin`, body: Buffer.alloc(1000 * 1000, i) }))]).then((b) => upload(api, thread, b)),
          413,
          'BODY_TOO_LARGE',
        ],
        ['text/plain', () => tarOf([good]).then((b) => upload(api, thread, b, { type: 'text/plain' })), 415, 'UNSUPPORTED_MEDIA_TYPE'],
        ['brotli', () => tarOf([good]).then((b) => upload(api, thread, b, { encoding: 'br' })), 415, 'UNSUPPORTED_MEDIA_TYPE'],
      ];
      for (const [label, answer, status, code] of cases) {
        const res = await answer();
        expect({ label, status: res.status, code: res.body?.error?.code }).toEqual({ label, status, code });
        expect(res.body.error.message.length).toBeGreaterThan(10);
      }
      expect(await listing(api, thread)).toEqual(['/taken']);

      const small = await platform.newTenant({ vfsBytes: 1000 });
      const quota = await upload(small, thread, await tarOf([{ name: 'a.bin', body: Buffer.alloc(600) }, { name: 'b.bin', body: Buffer.alloc(600) }]));
      expect({ status: quota.status, code: quota.body.error.code }).toEqual({ status: 429, code: 'QUOTA_EXCEEDED' });
      expect(await listing(small, thread)).toEqual([]);
    });
  });

  it('should answer bad thread ids and missing paths with a 4xx', async () => {
    expect((await api.get(`/v1/threads/${encodeURIComponent('../x')}/files`)).status).toBe(400);
    const noPath = await api.get(`${files('t-x')}/content`);
    expect(noPath.status).toBe(400);
    expect(noPath.body.error.code).toBe('VALIDATION_FAILED');
    expect((await platform.anonymous.get(`${files('t-x')}`)).status).toBe(401);
  });
});
