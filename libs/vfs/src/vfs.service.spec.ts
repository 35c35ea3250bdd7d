import { jest } from '@jest/globals';
import { Readable } from 'node:stream';
import tar from 'tar-stream';
import type { TenantLimits, TenantsRepository } from '@drydock/core';
import { makeConfig } from '../../../test/factories/config.factory.js';
import { InMemoryThreadFilesRepository } from './in-memory-thread-files.repository.js';
import type { GrepOptions, GrepResult } from './search/index.js';
import { MAX_LINE_CHARS } from './vfs-lines.js';
import { VfsService, type ThreadScope } from './vfs.service.js';

const scope: ThreadScope = { tenantId: 'ten_a', threadId: 'chat-1' };

function setup(options: { limits?: TenantLimits; env?: Record<string, string> } = {}) {
  const repo = new InMemoryThreadFilesRepository();
  const tenants: Pick<TenantsRepository, 'findById'> = {
    findById: async (id) => ({ id, name: id, limits: options.limits ?? {}, createdAt: new Date(), updatedAt: new Date() }),
  };
  const sut = new VfsService(repo, tenants as TenantsRepository, makeConfig(options.env));
  return { sut, repo };
}

async function errorOf(promise: Promise<unknown>): Promise<{ code: string; status: number; message: string }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; status: number; message: string };
  }
  throw new Error('expected a rejection');
}

async function tarOf(files: Record<string, string>): Promise<Readable> {
  const pack = tar.pack();
  for (const [name, body] of Object.entries(files)) pack.entry({ name }, body);
  pack.finalize();
  const chunks: Buffer[] = [];
  for await (const chunk of pack as AsyncIterable<Buffer>) chunks.push(chunk);
  return Readable.from([Buffer.concat(chunks)]);
}

const numbered = (from: number, to: number, text = (n: number) => `line ${n}`) =>
  Array.from({ length: to - from + 1 }, (_, i) => `${String(from + i).padStart(6)}\t${text(from + i)}`).join('\n');

describe(VfsService.name, () => {
  describe('read', () => {
    const lines = (n: number) => Array.from({ length: n }, (_, i) => `line ${i + 1}`).join('\n') + '\n';

    it('should number lines like cat -n, 500 at a time by default', async () => {
      const { sut } = setup();
      await sut.write(scope, '/big.txt', lines(1200));
      expect(await sut.read(scope, '/big.txt')).toBe(numbered(1, 500));
      expect(await sut.read(scope, '/big.txt', { offset: 500 })).toBe(numbered(501, 1000));
      expect(await sut.read(scope, '/big.txt', { offset: 1000 })).toBe(numbered(1001, 1200));
      expect(await sut.read(scope, '/big.txt', { offset: 499, limit: 2 })).toBe(numbered(500, 501));
    });

    it('should say how many lines there are when the offset is past the end', async () => {
      const { sut } = setup();
      await sut.write(scope, '/big.txt', lines(1200));
      expect(await sut.read(scope, '/big.txt', { offset: 1200 })).toBe(
        '/big.txt has 1200 lines; offset 1200 is past its end (offsets start at 0).',
      );
    });

    it('should not count a final newline as one more line, but show empty lines', async () => {
      const { sut } = setup();
      await sut.write(scope, '/a.txt', 'a\n\nb\n');
      expect(await sut.read(scope, '/a.txt')).toBe('     1\ta\n     2\t\n     3\tb');
      await sut.write(scope, '/b.txt', 'no newline');
      expect(await sut.read(scope, '/b.txt')).toBe('     1\tno newline');
    });

    it('should hide the \\r of CRLF line ends', async () => {
      const { sut } = setup();
      await sut.write(scope, '/win.txt', 'a\r\nb\r\n');
      expect(await sut.read(scope, '/win.txt')).toBe('     1\ta\n     2\tb');
    });

    it('should split lines over 2000 characters into numbered continuation rows', async () => {
      const { sut } = setup();
      const long = 'a'.repeat(2000) + 'b'.repeat(2000) + 'c'.repeat(500);
      await sut.write(scope, '/long.txt', `short\n${long}\nafter\n`);
      expect(await sut.read(scope, '/long.txt')).toBe(
        [
          '     1\tshort',
          `     2\t${'a'.repeat(2000)}`,
          `   2.1\t${'b'.repeat(2000)}`,
          `   2.2\t${'c'.repeat(500)}`,
          '     3\tafter',
        ].join('\n'),
      );
    });

    it('should answer a binary file with a sentence rather than its bytes', async () => {
      const { sut } = setup();
      await sut.write(scope, '/chart.png', Buffer.from([0x89, 0x50, 0x4e, 0x47, 0x00, 0xff]));
      expect(await sut.read(scope, '/chart.png')).toBe(
        '/chart.png is a binary file (image/png, 6 bytes); download it instead.',
      );
    });

    it('should say a file is empty', async () => {
      const { sut } = setup();
      await sut.write(scope, '/empty.txt', '');
      expect(await sut.read(scope, '/empty.txt')).toBe('/empty.txt is empty.');
    });

    it('should refuse a directory and a missing file with their codes', async () => {
      const { sut } = setup();
      await sut.write(scope, '/dir/a.txt', 'x');
      expect(await errorOf(sut.read(scope, '/dir'))).toMatchObject({ code: 'IS_A_DIRECTORY', status: 409 });
      expect(await errorOf(sut.read(scope, '/nope.txt'))).toMatchObject({
        code: 'FILE_NOT_FOUND',
        status: 404,
        message: 'No file or directory at /nope.txt.',
      });
    });

    it('should normalise the path it is given', async () => {
      const { sut } = setup();
      await sut.write(scope, 'dir/./a.txt', 'x');
      expect(await sut.read(scope, '//dir/sub/../a.txt/')).toBe('     1\tx');
      expect(await errorOf(sut.read(scope, '../../etc/passwd'))).toMatchObject({ code: 'INVALID_PATH', status: 400 });
    });
  });

  describe('write', () => {
    it('should create, then overwrite, moving version and revision', async () => {
      const { sut } = setup();
      const first = await sut.write(scope, '/a.txt', 'one');
      expect(first).toMatchObject({ created: true, info: { path: '/a.txt', version: 1, revision: 1, size: 3, text: true } });
      const second = await sut.write(scope, '/a.txt', 'two!');
      expect(second).toMatchObject({ created: false, info: { version: 2, revision: 2, size: 4 } });
      expect(second.info.createdAt).toEqual(first.info.createdAt);
    });

    it('should refuse an existing file when overwrite is false', async () => {
      const { sut } = setup();
      await sut.write(scope, '/a.txt', 'one');
      expect(await errorOf(sut.write(scope, '/a.txt', 'two', { overwrite: false }))).toMatchObject({
        code: 'FILE_EXISTS',
        status: 409,
      });
      expect(await sut.read(scope, '/a.txt')).toBe('     1\tone');
    });

    it('should refuse writing onto a directory, or beneath a file', async () => {
      const { sut } = setup();
      await sut.write(scope, '/dir/a.txt', 'x');
      expect(await errorOf(sut.write(scope, '/dir', 'x'))).toMatchObject({ code: 'IS_A_DIRECTORY' });
      expect(await errorOf(sut.write(scope, '/', 'x'))).toMatchObject({ code: 'IS_A_DIRECTORY' });
      const error = await errorOf(sut.write(scope, '/dir/a.txt/b.txt', 'x'));
      expect(error).toMatchObject({ code: 'FILE_EXISTS', status: 409 });
      expect(error.message).toContain('/dir/a.txt is a file');
    });

    it('should store UTF-8 without NUL as text and anything else as bytes', async () => {
      const { sut } = setup();
      expect((await sut.write(scope, '/u.txt', Buffer.from('héllo', 'utf8'))).info).toMatchObject({ text: true, size: 6 });
      expect((await sut.write(scope, '/nul.txt', Buffer.from('a\u0000b'))).info.text).toBe(false);
      expect((await sut.write(scope, '/latin1.txt', Buffer.from([0x68, 0xe9]))).info.text).toBe(false);
      expect((await sut.readContent(scope, '/latin1.txt')).content).toEqual(Buffer.from([0x68, 0xe9]));
      // A string is stored as its UTF-8: a lone surrogate, which has none, as U+FFFD.
      expect((await sut.write(scope, '/lone.txt', 'a\ud800b')).info).toMatchObject({ text: true, size: 5 });
      expect((await sut.readContent(scope, '/lone.txt')).content).toEqual(Buffer.from('a\ufffdb', 'utf8'));
      expect((await sut.grep(scope, '\ufffd', { outputMode: 'files_with_matches' })).files).toEqual(['/lone.txt']);
    });

    it('should take the content type from the caller, else from the extension', async () => {
      const { sut } = setup();
      const type = async (path: string, content: string | Buffer, contentType?: string) =>
        (await sut.write(scope, path, content, { contentType })).info.contentType;
      expect(await type('/a.csv', 'a,b')).toBe('text/csv; charset=utf-8');
      expect(await type('/a.json', '{}')).toBe('application/json');
      expect(await type('/a.py', 'x = 1')).toBe('text/x-python; charset=utf-8');
      expect(await type('/README', 'hi')).toBe('text/plain; charset=utf-8');
      expect(await type('/blob', Buffer.from([0xff, 0]))).toBe('application/octet-stream');
      expect(await type('/x.bin', 'x', 'application/x-custom')).toBe('application/x-custom');
      expect(await type('/y.txt', 'x', 'not a type')).toBe('text/plain; charset=utf-8');
    });

    it('should hash what it stores', async () => {
      const { sut } = setup();
      const { info } = await sut.write(scope, '/a.txt', 'abc');
      expect(info.sha256).toBe('ba7816bf8f01cfea414140de5dae2223b00361a396177a9cb410ff61f20015ad');
    });

    it('should refuse a file over the per-file limit and change nothing', async () => {
      const { sut } = setup({ env: { VFS_MAX_FILE_BYTES: '10' } });
      const error = await errorOf(sut.write(scope, '/a.txt', 'x'.repeat(11)));
      expect(error).toMatchObject({ code: 'FILE_TOO_LARGE', status: 413 });
      expect(error.message).toContain('/a.txt');
      expect(await sut.exists(scope, '/a.txt')).toBe(false);
    });

    it("should hold a tenant to its quota across threads, the tenant's limit overriding the default", async () => {
      const { sut, repo } = setup({ limits: { vfsBytes: 100 }, env: { VFS_MAX_TENANT_BYTES: '1000000' } });
      await sut.write(scope, '/a.txt', 'x'.repeat(60));
      const error = await errorOf(sut.write({ ...scope, threadId: 'chat-2' }, '/b.txt', 'x'.repeat(41)));
      expect(error).toMatchObject({ code: 'QUOTA_EXCEEDED', status: 429 });
      expect(await sut.revision({ ...scope, threadId: 'chat-2' })).toBe(0);
      // Replacing a file only counts the difference.
      await sut.write(scope, '/a.txt', 'x'.repeat(100));
      expect(repo.storedBytes(scope.tenantId)).toBe(100);
      await sut.delete(scope, '/a.txt');
      expect(repo.storedBytes(scope.tenantId)).toBe(0);
    });

    // Issue 57: a thread's files are all pushed into its sandbox at start.
    it("should hold a thread to its file limit, the tenant's limit overriding the default, on every write", async () => {
      const { sut } = setup({ limits: { maxFilesPerThread: 3 }, env: { VFS_MAX_FILES_PER_THREAD: '1000' } });
      await sut.writeMany(scope, [
        { path: '/a', content: 'a' },
        { path: '/b', content: 'b' },
      ]);
      expect(await errorOf(sut.writeMany(scope, [{ path: '/c', content: 'c' }, { path: '/d', content: 'd' }]))).toMatchObject({
        code: 'TOO_MANY_FILES',
        status: 422,
        details: { total: 4, max: 3 },
      });
      expect(await sut.exists(scope, '/c')).toBe(false);
      await sut.write(scope, '/c', 'c');
      const refused = await errorOf(sut.write(scope, '/d', 'd'));
      expect(refused).toMatchObject({ code: 'TOO_MANY_FILES', status: 422 });
      expect(refused.message).toContain('/d');
      expect((await errorOf(sut.writeArchive(scope, await tarOf({ 'e.txt': 'e' })))).code).toBe('TOO_MANY_FILES');
      // Replacing and editing add no file; a delete frees a place; other threads have their own.
      await sut.write(scope, '/a', 'a2');
      await sut.edit(scope, '/a', 'a2', 'a3');
      await sut.write({ ...scope, threadId: 'chat-2' }, '/d', 'd');
      await sut.delete(scope, '/b');
      await sut.write(scope, '/d', 'd');
      expect(await sut.glob(scope, '**')).toEqual(['/a', '/c', '/d']);
      expect(await sut.revision(scope)).toBe(6);
    });

    it('should write several files atomically in one revision', async () => {
      const { sut } = setup({ limits: { vfsBytes: 10 } });
      const written = await sut.writeMany(scope, [
        { path: '/a', content: 'aa' },
        { path: '/b/c', content: 'cc' },
      ]);
      expect(written.map((w) => w.info.revision)).toEqual([1, 1]);
      expect(
        await errorOf(
          sut.writeMany(scope, [
            { path: '/d', content: 'd' },
            { path: '/e', content: 'x'.repeat(10) },
          ]),
        ),
      ).toMatchObject({ code: 'QUOTA_EXCEEDED' });
      expect(await sut.exists(scope, '/d')).toBe(false);
      expect(await errorOf(sut.writeMany(scope, [{ path: '/f', content: '' }, { path: '/f/g', content: '' }]))).toMatchObject({
        code: 'FILE_EXISTS',
      });
    });
  });

  describe('writeArchive', () => {
    it('should write every file of the archive under the folder in one revision and count them', async () => {
      const { sut } = setup();
      await sut.write(scope, '/in/old.txt', 'old');
      const result = await sut.writeArchive(scope, await tarOf({ 'old.txt': 'new!', 'a/b.csv': 'x,y\n' }), { under: 'in/' });
      expect(result).toEqual({ path: '/in', written: 2, created: 1, bytes: 8, revision: 2 });
      expect((await sut.readContent(scope, '/in/old.txt')).content.toString()).toBe('new!');
      expect((await sut.stat(scope, '/in/a/b.csv')) as { contentType: string; revision: number }).toMatchObject({
        contentType: 'text/csv; charset=utf-8',
        revision: 2,
      });
    });

    it('should write nothing when one file conflicts, is duplicated or passes the quota', async () => {
      const { sut } = setup({ limits: { vfsBytes: 100 } });
      await sut.write(scope, '/f', 'a file');
      const cases: [Record<string, string>, string][] = [
        [{ 'ok.txt': '1', 'f/g.txt': '2' }, 'FILE_EXISTS'],
        [{ 'ok.txt': '1', './ok.txt': '2' }, 'INVALID_PATH'],
        [{ 'ok.txt': '1', 'big.txt': 'x'.repeat(95) }, 'QUOTA_EXCEEDED'],
      ];
      for (const [files, code] of cases) {
        expect((await errorOf(sut.writeArchive(scope, await tarOf(files)))).code).toBe(code);
      }
      expect(await sut.exists(scope, '/ok.txt')).toBe(false);
      expect(await sut.revision(scope)).toBe(1);
    });

    it('should answer the current revision for an archive without files', async () => {
      const { sut } = setup();
      await sut.write(scope, '/a', 'a');
      expect(await sut.writeArchive(scope, await tarOf({}))).toEqual({ path: '/', written: 0, created: 0, bytes: 0, revision: 1 });
    });

    it('should refuse a bad folder before reading the body', async () => {
      const { sut } = setup();
      const body = await tarOf({ 'a.txt': 'a' });
      expect((await errorOf(sut.writeArchive(scope, body, { under: '/../x' }))).code).toBe('INVALID_PATH');
      expect(body.readableDidRead).toBe(false);
    });
  });

  describe('edit', () => {
    it('should replace a unique string and report one occurrence', async () => {
      const { sut } = setup();
      await sut.write(scope, '/a.py', 'x = 1\ny = 2\n');
      expect(await sut.edit(scope, 'a.py', 'y = 2', 'y = 3')).toEqual({ path: '/a.py', occurrences: 1 });
      expect((await sut.readContent(scope, '/a.py')).content.toString()).toBe('x = 1\ny = 3\n');
    });

    it('should refuse an ambiguous string, saying how many times it occurs', async () => {
      const { sut } = setup();
      await sut.write(scope, '/a.txt', 'foo foo foo');
      const error = await errorOf(sut.edit(scope, '/a.txt', 'foo', 'bar'));
      expect(error).toMatchObject({ code: 'AMBIGUOUS_MATCH', status: 422 });
      expect(error.message).toContain('occurs 3 times in /a.txt');
    });

    it('should replace every occurrence when asked and count them', async () => {
      const { sut } = setup();
      await sut.write(scope, '/a.txt', 'foo foo foo');
      expect(await sut.edit(scope, '/a.txt', 'foo', 'bar', true)).toEqual({ path: '/a.txt', occurrences: 3 });
      expect((await sut.readContent(scope, '/a.txt')).content.toString()).toBe('bar bar bar');
    });

    it('should insert the new string literally (no $& patterns)', async () => {
      const { sut } = setup();
      await sut.write(scope, '/a.txt', 'price: X');
      await sut.edit(scope, '/a.txt', 'X', '$& $1 $$');
      expect((await sut.readContent(scope, '/a.txt')).content.toString()).toBe('price: $& $1 $$');
    });

    it('should refuse a missing or empty string, a binary file, a directory and a missing file', async () => {
      const { sut } = setup();
      await sut.write(scope, '/a.txt', 'abc');
      await sut.write(scope, '/b.bin', Buffer.from([0, 1, 2]));
      expect(await errorOf(sut.edit(scope, '/a.txt', 'zzz', 'y'))).toMatchObject({ code: 'STRING_NOT_FOUND', status: 422 });
      expect(await errorOf(sut.edit(scope, '/a.txt', '', 'y'))).toMatchObject({ code: 'STRING_NOT_FOUND' });
      expect(await errorOf(sut.edit(scope, '/b.bin', 'a', 'y'))).toMatchObject({ code: 'NOT_A_TEXT_FILE', status: 422 });
      expect(await errorOf(sut.edit(scope, '/', 'a', 'y'))).toMatchObject({ code: 'IS_A_DIRECTORY' });
      expect(await errorOf(sut.edit(scope, '/c.txt', 'a', 'y'))).toMatchObject({ code: 'FILE_NOT_FOUND' });
    });

    it('should keep the file untouched when the edit fails', async () => {
      const { sut } = setup({ env: { VFS_MAX_FILE_BYTES: '5' } });
      await sut.write(scope, '/a.txt', 'abc');
      expect(await errorOf(sut.edit(scope, '/a.txt', 'b', 'bbbbbb'))).toMatchObject({ code: 'FILE_TOO_LARGE' });
      expect(await sut.stat(scope, '/a.txt')).toMatchObject({ version: 1, size: 3 });
    });
  });

  describe('ls', () => {
    it('should list direct children with implied directories, sorted', async () => {
      const { sut } = setup();
      await sut.write(scope, '/b.txt', 'bb');
      await sut.write(scope, '/a/x/deep.txt', 'x');
      await sut.write(scope, '/a/y.txt', 'y');
      await sut.write(scope, '/.env', 'z');
      expect((await sut.ls(scope)).map((e) => [e.path, e.type, e.size])).toEqual([
        ['/.env', 'file', 1],
        ['/a', 'directory', 0],
        ['/b.txt', 'file', 2],
      ]);
      expect((await sut.ls(scope, '/a/')).map((e) => e.path)).toEqual(['/a/x', '/a/y.txt']);
    });

    it('should list a file path as that file, an empty root as nothing, and refuse a missing directory', async () => {
      const { sut } = setup();
      expect(await sut.ls(scope, '/')).toEqual([]);
      await sut.write(scope, '/a/b.txt', 'x');
      expect((await sut.ls(scope, '/a/b.txt')).map((e) => e.path)).toEqual(['/a/b.txt']);
      expect(await errorOf(sut.ls(scope, '/missing'))).toMatchObject({ code: 'FILE_NOT_FOUND' });
    });

    it("should never show another tenant's or thread's files", async () => {
      const { sut } = setup();
      await sut.write(scope, '/secret.txt', 'x');
      expect(await sut.ls({ tenantId: 'ten_b', threadId: scope.threadId })).toEqual([]);
      expect(await sut.ls({ ...scope, threadId: 'chat-2' })).toEqual([]);
      expect(await errorOf(sut.read({ tenantId: 'ten_b', threadId: scope.threadId }, '/secret.txt'))).toMatchObject({
        code: 'FILE_NOT_FOUND',
      });
    });
  });

  describe('glob', () => {
    async function tree() {
      const ctx = setup();
      for (const path of ['/main.py', '/src/app.py', '/src/lib/util.py', '/src/.hidden.py', '/docs/a.md', '/docs/b.txt']) {
        await ctx.sut.write(scope, path, 'x');
      }
      return ctx;
    }

    it.each([
      ['**/*.py', '/', ['/main.py', '/src/.hidden.py', '/src/app.py', '/src/lib/util.py']],
      ['*.py', '/', ['/main.py']],
      ['*.py', '/src', ['/src/.hidden.py', '/src/app.py']],
      ['src/**/*.py', '/', ['/src/.hidden.py', '/src/app.py', '/src/lib/util.py']],
      ['docs/?.{md,txt}', '/', ['/docs/a.md', '/docs/b.txt']],
      ['docs/[a].*', '/', ['/docs/a.md']],
      ['/src/*/*.py', '/', ['/src/lib/util.py']],
      ['./lib/*', '/src', ['/src/lib/util.py']],
      ['nothing*', '/', []],
    ])('should match %j under %j', async (pattern, path, expected) => {
      const { sut } = await tree();
      expect(await sut.glob(scope, pattern, path)).toEqual(expected);
    });

    it('should refuse an empty pattern and a missing base directory', async () => {
      const { sut } = await tree();
      expect(await errorOf(sut.glob(scope, ''))).toMatchObject({ code: 'INVALID_PATTERN', status: 400 });
      expect(await errorOf(sut.glob(scope, '*', '/missing'))).toMatchObject({ code: 'FILE_NOT_FOUND' });
    });
  });

  describe('grep', () => {
    async function corpus() {
      const ctx = setup();
      await ctx.sut.write(scope, '/notes.md', 'TODO: buy milk\ndone\ntodo later\n');
      await ctx.sut.write(scope, '/src/app.py', 'def main():\n    # TODO refactor\n    return 1\n');
      await ctx.sut.write(scope, '/src/util.py', 'def helper():\n    pass\n');
      await ctx.sut.write(scope, '/image.png', Buffer.from([0x54, 0x4f, 0x44, 0x4f, 0x00, 0xff]));
      return ctx;
    }

    it('should list files with a literal match by default, skipping binary files', async () => {
      const { sut } = await corpus();
      expect(await sut.grep(scope, 'TODO')).toEqual({
        mode: 'files_with_matches',
        files: ['/notes.md', '/src/app.py'],
        truncated: false,
      });
    });

    it('should treat the pattern literally unless regex is asked for', async () => {
      const { sut } = await corpus();
      expect((await sut.grep(scope, 'def .*\\(')).files).toEqual([]);
      expect((await sut.grep(scope, 'def .*\\(', { regex: true })).files).toEqual(['/src/app.py', '/src/util.py']);
      expect((await sut.grep(scope, '():', {})).files).toEqual(['/src/app.py', '/src/util.py']);
    });

    it('should show matching lines with their numbers in content mode', async () => {
      const { sut } = await corpus();
      expect((await sut.grep(scope, 'todo', { outputMode: 'content', caseInsensitive: true })).matches).toEqual([
        { path: '/notes.md', line: 1, text: 'TODO: buy milk' },
        { path: '/notes.md', line: 3, text: 'todo later' },
        { path: '/src/app.py', line: 2, text: '    # TODO refactor' },
      ]);
    });

    it('should count matching lines per file in count mode', async () => {
      const { sut } = await corpus();
      expect((await sut.grep(scope, 'TODO|def', { regex: true, outputMode: 'count' })).counts).toEqual([
        { path: '/notes.md', count: 1 },
        { path: '/src/app.py', count: 2 },
        { path: '/src/util.py', count: 1 },
      ]);
    });

    it('should search only beneath path and in files matching glob', async () => {
      const { sut } = await corpus();
      expect((await sut.grep(scope, 'def', { path: '/src', glob: 'util.*' })).files).toEqual(['/src/util.py']);
      expect((await sut.grep(scope, 'TODO', { glob: '*.md' })).files).toEqual(['/notes.md']);
      expect((await sut.grep(scope, 'TODO', { path: '/src/app.py' })).files).toEqual(['/src/app.py']);
    });

    it('should stop at maxMatches and say the result is truncated', async () => {
      const { sut } = await corpus();
      const result = await sut.grep(scope, 'o', { outputMode: 'content', maxMatches: 2 });
      expect(result.matches).toHaveLength(2);
      expect(result.truncated).toBe(true);
      expect(result.note).toContain('first 2 matching lines');
      const files = await sut.grep(scope, 'e', { maxMatches: 1 });
      expect(files).toMatchObject({ files: ['/notes.md'], truncated: true });
    });

    it('should answer in path order across the statements it reads several of at once', async () => {
      const ctx = setup();
      // More files than two statements read (500 each), names that sort differently as numbers.
      const files = Array.from({ length: 1200 }, (_, i) => ({ path: `/f/${i}.txt`, content: `hit ${i}\nmiss\nhit again\n` }));
      await ctx.sut.writeMany(scope, files);
      const sorted = files.map((f) => f.path).sort();
      const content = await ctx.sut.grep(scope, 'hit', { outputMode: 'content', maxMatches: 100_000 });
      expect(content.truncated).toBe(false);
      expect(content.matches!.map((m) => `${m.path}:${m.line}`)).toEqual(sorted.flatMap((p) => [`${p}:1`, `${p}:3`]));
      const counts = await ctx.sut.grep(scope, 'hit', { outputMode: 'count', maxMatches: 100_000 });
      expect(counts.counts).toEqual(sorted.map((path) => ({ path, count: 2 })));
      // Stopping in the middle of the second statement's files.
      const cut = await ctx.sut.grep(scope, 'hit', { outputMode: 'content', maxMatches: 1001 });
      expect(cut).toMatchObject({ truncated: true });
      expect(cut.matches!.map((m) => `${m.path}:${m.line}`)).toEqual(sorted.flatMap((p) => [`${p}:1`, `${p}:3`]).slice(0, 1001));
    });

    it('should give the REST route the same answer as JSON text, in every mode, also cut between statements', async () => {
      const ctx = setup();
      // Three statements of files; lines that JSON must escape, one over the shown length.
      const long = 'x'.repeat(MAX_LINE_CHARS + 5);
      const files = Array.from({ length: 1200 }, (_, i) => ({
        path: `/f/${String(i).padStart(4, '0')}.txt`,
        content: `hit "${i}"\\\tend\r\nmiss\nhit ${i % 100 === 0 ? long : 'é ☃ \u0001'}\n`,
      }));
      await ctx.sut.writeMany(scope, files);
      const queries: GrepOptions[] = [
        { outputMode: 'content', maxMatches: 100_000 },
        // Cut in the second statement's files, at its first line, and after one line.
        { outputMode: 'content', maxMatches: 1001 },
        { outputMode: 'content', maxMatches: 1000 },
        { outputMode: 'content', maxMatches: 1 },
        { outputMode: 'content', path: '/f', glob: '*5.txt' },
        { outputMode: 'count', maxMatches: 700 },
        { outputMode: 'files_with_matches', maxMatches: 3 },
      ];
      for (const options of queries) {
        const json = await ctx.sut.grepJson(scope, 'hit', options);
        expect([options, JSON.parse(json.toString('utf8'))]).toEqual([options, await ctx.sut.grep(scope, 'hit', options)]);
      }
      const all = JSON.parse((await ctx.sut.grepJson(scope, 'hit', queries[0]!)).toString('utf8')) as GrepResult;
      expect(all.matches).toHaveLength(2400);
      expect(all.matches![0]).toEqual({ path: '/f/0000.txt', line: 1, text: 'hit "0"\\\tend' });
      expect(all.matches![1]).toEqual({ path: '/f/0000.txt', line: 3, text: `hit ${'x'.repeat(MAX_LINE_CHARS - 4)}…` });
      expect(JSON.parse((await ctx.sut.grepJson(scope, 'nowhere', { outputMode: 'content' })).toString('utf8'))).toEqual({ mode: 'content', matches: [], truncated: false });
      await expect(ctx.sut.grepJson(scope, 'hit', { path: '/missing', outputMode: 'content' })).rejects.toMatchObject({ code: 'FILE_NOT_FOUND' });
    });

    it('should stop testing whole files once most files of a statement matched, and test the rest in path ranges once few did', async () => {
      const ctx = setup();
      // Four statements of 500 files: all "hit", all "miss", all "hit", all "miss".
      const files = Array.from({ length: 2000 }, (_, i) => ({
        path: `/f/${String(i).padStart(4, '0')}.txt`,
        content: Math.floor(i / 500) % 2 === 0 ? `hit ${i}\n` : 'miss\n',
      }));
      await ctx.sut.writeMany(scope, files);
      const fileTests: (boolean | undefined)[] = [];
      const matchLines = ctx.repo.matchLines.bind(ctx.repo);
      jest.spyOn(ctx.repo, 'matchLines').mockImplementation((...args: Parameters<typeof matchLines>) => {
        fileTests.push(args[5]?.fileTest);
        return matchLines(...args);
      });
      const ranges: unknown[] = [];
      const findMatchingFiles = ctx.repo.findMatchingFiles.bind(ctx.repo);
      jest.spyOn(ctx.repo, 'findMatchingFiles').mockImplementation((...args: Parameters<typeof findMatchingFiles>) => {
        ranges.push(args[4]);
        return findMatchingFiles(...args);
      });
      const path = (i: number) => files[i]!.path;
      // Two statements go out at once; each later one is decided by the answer two
      // before it. The second answer finds no match: the third statement, already sent,
      // is read, and the last 500 files are tested in two ranges (no match there).
      const hits = await ctx.sut.grep(scope, 'hit', { outputMode: 'content', maxMatches: 100_000 });
      expect(hits.matches!.map((m) => m.path)).toEqual([...files.slice(0, 500), ...files.slice(1000, 1500)].map((f) => f.path));
      expect(fileTests).toEqual([true, true, false]);
      expect(ranges).toEqual([{ after: path(1499), through: path(1749) }, { after: path(1749), through: undefined }]);
      // The first answer finds no match: the second is read, the last 1,000 files are
      // tested in two ranges, and the 500 that match are split without the test.
      fileTests.length = 0;
      ranges.length = 0;
      const misses = await ctx.sut.grep(scope, 'miss', { outputMode: 'content', maxMatches: 100_000 });
      expect(misses.matches!.map((m) => m.path)).toEqual([...files.slice(500, 1000), ...files.slice(1500)].map((f) => f.path));
      expect(fileTests).toEqual([true, true, false]);
      expect(ranges).toEqual([{ after: path(999), through: path(1499) }, { after: path(1499), through: undefined }]);
    });

    it('should refuse regexes PostgreSQL cannot run (backreferences) rather than run them in-process', async () => {
      const { sut } = await corpus();
      await sut.write(scope, '/dup.txt', 'a b b c\nno dups\n');
      expect(await errorOf(sut.grep(scope, '\\b(\\w+) \\1\\b', { regex: true }))).toMatchObject({
        code: 'INVALID_PATTERN',
        status: 400,
      });
    });

    it('should refuse invalid and empty patterns and a missing path', async () => {
      const { sut } = await corpus();
      expect(await errorOf(sut.grep(scope, '(', { regex: true }))).toMatchObject({ code: 'INVALID_PATTERN', status: 400 });
      expect(await errorOf(sut.grep(scope, ''))).toMatchObject({ code: 'INVALID_PATTERN' });
      expect(await errorOf(sut.grep(scope, 'x', { path: '/missing' }))).toMatchObject({ code: 'FILE_NOT_FOUND' });
    });
  });

  describe('delete', () => {
    it('should delete a directory recursively and leave tombstones for the sync', async () => {
      const { sut } = setup();
      await sut.write(scope, '/keep.txt', 'k');
      await sut.write(scope, '/dir/a.txt', 'a');
      await sut.write(scope, '/dir/sub/b.txt', 'b');
      const before = await sut.revision(scope);
      expect(await sut.delete(scope, '/dir')).toEqual({ deleted: ['/dir/a.txt', '/dir/sub/b.txt'] });
      expect(await sut.exists(scope, '/dir')).toBe(false);
      expect(await sut.revision(scope)).toBe(before + 1);
      const changes = await sut.changesSince(scope, before);
      expect(changes).toEqual({ revision: before + 1, upserts: [], deletes: ['/dir/a.txt', '/dir/sub/b.txt'] });
    });

    it('should delete everything for / and refuse a missing path', async () => {
      const { sut } = setup();
      await sut.write(scope, '/a', 'a');
      await sut.write(scope, '/b/c', 'c');
      expect(await sut.delete(scope, '/')).toEqual({ deleted: ['/a', '/b/c'] });
      expect(await sut.ls(scope)).toEqual([]);
      expect(await errorOf(sut.delete(scope, '/a'))).toMatchObject({ code: 'FILE_NOT_FOUND' });
    });

    it('should let a deleted path be created again', async () => {
      const { sut } = setup();
      await sut.write(scope, '/a', 'one');
      await sut.delete(scope, '/a');
      expect(await sut.write(scope, '/a', 'two', { overwrite: false })).toMatchObject({ created: true, info: { version: 3 } });
    });
  });

  describe('stat and exists', () => {
    it('should describe files, implied directories and the root', async () => {
      const { sut } = setup();
      expect(await sut.stat(scope, '/')).toEqual({ path: '/', type: 'directory', size: 0, modifiedAt: null });
      const { info } = await sut.write(scope, '/d/a.csv', 'a,b\n');
      expect(await sut.stat(scope, '/d/a.csv')).toEqual(info);
      expect(await sut.stat(scope, '/d')).toEqual({ path: '/d', type: 'directory', size: 0, modifiedAt: info.modifiedAt });
      expect(await errorOf(sut.stat(scope, '/e'))).toMatchObject({ code: 'FILE_NOT_FOUND' });
      expect(await sut.exists(scope, '/')).toBe(true);
      expect(await sut.exists(scope, '/d')).toBe(true);
      expect(await sut.exists(scope, '/d/b')).toBe(false);
    });
  });

  describe('changesSince', () => {
    it('should return what changed after a revision, and everything live from 0', async () => {
      const { sut } = setup();
      await sut.write(scope, '/a', 'a');
      const mid = await sut.revision(scope);
      await sut.write(scope, '/b', 'b');
      await sut.delete(scope, '/a');
      const changes = await sut.changesSince(scope, mid);
      expect(changes.revision).toBe(mid + 2);
      expect(changes.upserts.map((u) => u.path)).toEqual(['/b']);
      expect(changes.deletes).toEqual(['/a']);
      const full = await sut.changesSince(scope, 0);
      expect(full).toMatchObject({ upserts: [{ path: '/b', info: { sha256: expect.any(String) } }], deletes: [] });
      expect((await sut.changesSince(scope, 999)).upserts.map((u) => u.path)).toEqual(['/b']);
    });
  });
});
