import { PassThrough, Readable } from 'node:stream';
import { gzipSync } from 'node:zlib';
import { tarOf, type TarEntry as Entry } from '../../../test/support/tar-archive.js';
import { archiveEntryPath, readTarArchive, type ReadArchiveOptions } from './vfs-archive.js';

// Replaces the bytes of the first header's name (no pax header: an ASCII name) and
// fixes its checksum, as a tar written from raw file-system bytes would hold them.
function withNameBytes(archive: Buffer, name: Buffer): Buffer {
  const out = Buffer.from(archive);
  out.fill(0, 0, 100);
  name.copy(out, 0);
  out.fill(0x20, 148, 156);
  let sum = 0;
  for (let i = 0; i < 512; i++) sum += out[i]!;
  out.write(`${sum.toString(8).padStart(6, '0')}\0 `, 148, 'latin1');
  return out;
}

// The body as a request would stream it: small chunks, so that headers and contents
// straddle chunk boundaries.
function bodyOf(bytes: Buffer, chunk = 700): PassThrough {
  const body = new PassThrough();
  (async () => {
    for (let i = 0; i < bytes.length; i += chunk) {
      if (!body.write(bytes.subarray(i, i + chunk))) await new Promise((r) => body.once('drain', r));
    }
    body.end();
  })();
  return body;
}

const limits: ReadArchiveOptions = {
  gzip: false,
  under: '/',
  maxBytes: 1024 * 1024,
  maxEntries: 1000,
  maxFileBytes: 64 * 1024,
  maxTotalFileBytes: 512 * 1024,
  maxFiles: 1000,
};

async function read(bytes: Buffer, options: Partial<ReadArchiveOptions> = {}) {
  const files = await readTarArchive(bodyOf(bytes), { ...limits, ...options });
  return Object.fromEntries(files.map((f) => [f.path, f.content.toString('latin1')]));
}

async function errorOf(promise: Promise<unknown>): Promise<{ code: string; status: number; message: string; details?: Record<string, unknown> }> {
  try {
    await promise;
  } catch (error) {
    return error as { code: string; status: number; message: string };
  }
  throw new Error('expected a rejection');
}

describe('thread file archives', () => {
  describe(archiveEntryPath.name, () => {
    it('should place names under the folder, dropping a leading slash and dot segments', () => {
      expect(archiveEntryPath('a/b.txt', '/')).toBe('/a/b.txt');
      expect(archiveEntryPath('./a//b.txt', '/in')).toBe('/in/a/b.txt');
      expect(archiveEntryPath('/etc/passwd', '/in')).toBe('/in/etc/passwd');
      expect(archiveEntryPath('./', '/in')).toBe('/in');
    });

    it('should refuse .. anywhere, and what the VFS path rules refuse, with INVALID_PATH', () => {
      for (const name of ['../x', 'a/../../x', 'a/../b', 'a\\b', 'a/\u0007b', '%2e%2e/x', `${'n'.repeat(256)}/x`]) {
        let code: string | undefined;
        try {
          archiveEntryPath(name, '/in');
        } catch (error) {
          code = (error as { code: string }).code;
        }
        expect({ name, code }).toEqual({ name, code: 'INVALID_PATH' });
      }
    });

    it('should refuse a name that makes the whole path longer than 4096 bytes', () => {
      const under = `/${'d'.repeat(200)}`.repeat(20); // 4,020 bytes: a valid folder
      expect(() => archiveEntryPath('x'.repeat(200), under)).toThrow(expect.objectContaining({ code: 'INVALID_PATH' }));
    });
  });

  describe(readTarArchive.name, () => {
    it('should read every regular file with its exact bytes, directories implied', async () => {
      const binary = Buffer.from([0, 1, 2, 0xff, 0xfe]);
      const long = `deep/${'segment-'.repeat(20)}/file.txt`;
      const archive = await tarOf([
        { name: './', type: 'directory' },
        { name: 'data/', type: 'directory' },
        { name: 'data/in.csv', body: 'a,b\n1,2\n' },
        { name: 'img/dot.bin', body: binary },
        { name: 'empty.txt', body: '' },
        { name: long, body: 'x'.repeat(3000) },
        { name: 'naïve/café.md', body: 'ünïcode' },
      ]);
      expect(await read(archive, { under: '/up' })).toEqual({
        '/up/data/in.csv': 'a,b\n1,2\n',
        '/up/img/dot.bin': binary.toString('latin1'),
        '/up/empty.txt': '',
        [`/up/${long}`]: 'x'.repeat(3000),
        '/up/naïve/café.md': Buffer.from('ünïcode').toString('latin1'),
      });
    });

    it('should read a gzipped archive', async () => {
      const archive = await tarOf([{ name: 'a.txt', body: 'hello' }]);
      expect(await read(gzipSync(archive), { gzip: true })).toEqual({ '/a.txt': 'hello' });
    });

    it('should take UTF-8 names stored as raw bytes and refuse names that are not UTF-8', async () => {
      const archive = await tarOf([{ name: 'cafXY.txt', body: 'ok' }]);
      const utf8 = withNameBytes(archive, Buffer.from('café.txt'));
      expect(await read(utf8)).toEqual({ '/café.txt': 'ok' });
      const latin1 = withNameBytes(archive, Buffer.from([0x63, 0x61, 0x66, 0xe9, 0x2e, 0x74, 0x78, 0x74]));
      const refused = await errorOf(read(latin1));
      expect(refused).toMatchObject({ code: 'INVALID_PATH', status: 400 });
      expect(refused.message).toContain('UTF-8');
    });

    it.each([
      ['symlink', { name: 'link', type: 'symlink', linkname: '/etc/passwd' }, 'symbolic link'],
      ['hard link', { name: 'hard', type: 'link', linkname: 'a.txt' }, 'hard link'],
      ['character device', { name: 'tty', type: 'character-device' }, 'character device'],
      ['fifo', { name: 'pipe', type: 'fifo' }, 'FIFO'],
    ] as const)('should refuse a %s with UNSUPPORTED_ARCHIVE_ENTRY, whatever came before', async (_, entry, type) => {
      const archive = await tarOf([{ name: 'a.txt', body: 'kept?' }, entry as Entry, { name: 'b.txt', body: 'after' }]);
      const refused = await errorOf(read(archive));
      expect(refused).toMatchObject({ code: 'UNSUPPORTED_ARCHIVE_ENTRY', status: 400, details: { entry: entry.name, type } });
    });

    it('should refuse an entry climbing out with .., naming it', async () => {
      const archive = await tarOf([{ name: 'ok.txt', body: '1' }, { name: '../../etc/cron.d/x', body: 'pwned' }]);
      const refused = await errorOf(read(archive, { under: '/in' }));
      expect(refused).toMatchObject({ code: 'INVALID_PATH', status: 400 });
      expect(refused.message).toContain('../../etc/cron.d/x');
    });

    it('should refuse a file over the size limit from its header with FILE_TOO_LARGE', async () => {
      const archive = await tarOf([{ name: 'big.bin', body: Buffer.alloc(64 * 1024 + 1) }]);
      expect(await errorOf(read(archive))).toMatchObject({ code: 'FILE_TOO_LARGE', status: 413, details: { size: 64 * 1024 + 1 } });
    });

    it("should refuse files that alone pass the tenant's quota with QUOTA_EXCEEDED", async () => {
      const archive = await tarOf(Array.from({ length: 5 }, (_, i) => ({ name: `f${i}.bin`, body: Buffer.alloc(30_000) })));
      expect(await read(archive, { maxTotalFileBytes: 150_000 })).toHaveProperty(['/f4.bin']);
      expect(await errorOf(read(archive, { maxTotalFileBytes: 149_999 }))).toMatchObject({ code: 'QUOTA_EXCEEDED', status: 429 });
    });

    // Issue 57: 200,000 empty files in a 1.4 MB .tar.gz were all read, then written.
    it('should refuse an archive of more entries than maxEntries with ARCHIVE_TOO_MANY_ENTRIES, directories counted', async () => {
      const entries = (n: number): Entry[] => [
        { name: 'd/', type: 'directory' },
        ...Array.from({ length: n - 1 }, (_, i) => ({ name: `d/f${i}`, body: '' })),
      ];
      expect(Object.keys(await read(await tarOf(entries(100)), { maxEntries: 100 }))).toHaveLength(99);
      const many = gzipSync(await tarOf(entries(5000)));
      expect(await errorOf(read(many, { gzip: true, maxEntries: 100 }))).toMatchObject({
        code: 'ARCHIVE_TOO_MANY_ENTRIES',
        status: 413,
        details: { max: 100 },
      });
    });

    it('should refuse more files than one thread may hold with TOO_MANY_FILES', async () => {
      const archive = await tarOf(Array.from({ length: 11 }, (_, i) => ({ name: `f${i}.txt`, body: 'x' })));
      expect(Object.keys(await read(archive, { maxFiles: 11 }))).toHaveLength(11);
      expect(await errorOf(read(archive, { maxFiles: 10 }))).toMatchObject({ code: 'TOO_MANY_FILES', status: 422, details: { max: 10 } });
    });

    it('should refuse a body over maxBytes with BODY_TOO_LARGE, and a gzip that inflates past it', async () => {
      const archive = await tarOf(Array.from({ length: 20 }, (_, i) => ({ name: `f${i}.txt`, body: 'x'.repeat(10_000) })));
      expect(await errorOf(read(archive, { maxBytes: 100_000 }))).toMatchObject({ code: 'BODY_TOO_LARGE', status: 413 });
      const bomb = gzipSync(await tarOf([{ name: 'zeros', body: Buffer.alloc(60_000) }]));
      expect(bomb.length).toBeLessThan(1000);
      expect(await errorOf(read(bomb, { gzip: true, maxBytes: 50_000 }))).toMatchObject({ code: 'BODY_TOO_LARGE', status: 413 });
    });

    it('should refuse what is not a whole tar archive with INVALID_ARCHIVE', async () => {
      const archive = await tarOf([{ name: 'a.txt', body: 'x'.repeat(2000) }]);
      const cases: [string, Buffer, Partial<ReadArchiveOptions>][] = [
        ['text', Buffer.from('not a tar archive at all, just some text that goes on and on. '.repeat(20)), {}],
        ['cut short', archive.subarray(0, 1200), {}],
        ['empty', Buffer.alloc(0), {}],
        ['a tar sent as gzip', archive, { gzip: true }],
        ['a gzip sent as tar', gzipSync(archive), {}],
        ['a gzip cut short', gzipSync(archive).subarray(0, 40), { gzip: true }],
      ];
      for (const [label, bytes, options] of cases) {
        const refused = await errorOf(read(bytes, options));
        expect({ label, code: refused.code, status: refused.status }).toEqual({ label, code: 'INVALID_ARCHIVE', status: 400 });
      }
    });

    it('should leave a refused body undestroyed, for the caller to drain', async () => {
      const archive = await tarOf([
        { name: 'link', type: 'symlink', linkname: 'x' },
        ...Array.from({ length: 50 }, (_, i) => ({ name: `f${i}.txt`, body: 'y'.repeat(5000) })),
      ]);
      const body = bodyOf(archive, 512);
      await expect(readTarArchive(body, limits)).rejects.toMatchObject({ code: 'UNSUPPORTED_ARCHIVE_ENTRY' });
      expect(body.destroyed).toBe(false);
      let rest = 0;
      body.on('data', (chunk: Buffer) => (rest += chunk.length));
      await new Promise((resolve) => body.once('end', resolve));
      expect(rest).toBeGreaterThan(0);
    });

    it('should read a body that arrives in one chunk', async () => {
      const archive = await tarOf([{ name: 'a.txt', body: 'one' }, { name: 'b/c.txt', body: 'two' }]);
      const files = await readTarArchive(Readable.from([archive]), limits);
      expect(files.map((f) => [f.path, f.content.toString()])).toEqual([
        ['/a.txt', 'one'],
        ['/b/c.txt', 'two'],
      ]);
    });
  });
});
