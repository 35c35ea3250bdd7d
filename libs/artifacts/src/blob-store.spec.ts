import { createHash, randomBytes, randomUUID } from 'node:crypto';
import { readlinkSync } from 'node:fs';
import { mkdir, mkdtemp, open, readdir, readFile, readlink, rm, stat, utimes, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { BlobTooLargeError, LocalBlobStore } from './blob-store.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

type FileHandleCall = (this: { fd: number }) => Promise<void>;

// Wraps one of node's FileHandle methods for a test (every handle shares its prototype,
// which only a handle opened in `dir` gives); returns how to put the original back.
async function wrapFileHandle(dir: string, name: 'sync' | 'datasync', wrap: (original: FileHandleCall) => FileHandleCall): Promise<() => void> {
  const probe = await open(join(dir, 'probe'), 'w');
  const proto = Object.getPrototypeOf(probe) as Record<'sync' | 'datasync', FileHandleCall>;
  await probe.close();
  await rm(join(dir, 'probe'));
  const original = proto[name];
  proto[name] = wrap(original);
  return () => {
    proto[name] = original;
  };
}

// The bytes in chunks of 64 KiB, as a socket gives them.
function chunked(bytes: Buffer): Readable {
  const chunks: Buffer[] = [];
  for (let at = 0; at < bytes.length; at += 65_536) chunks.push(bytes.subarray(at, at + 65_536));
  return Readable.from(chunks);
}

describe('LocalBlobStore', () => {
  let root: string;
  let store: LocalBlobStore;

  beforeEach(async () => {
    root = await mkdtemp(join(tmpdir(), 'drydock-blobs-'));
    store = new LocalBlobStore(root);
  });

  afterEach(async () => {
    await store.close();
    await rm(root, { recursive: true, force: true });
  });

  it.each([
    ['small, its size known', 1000, true],
    ['streamed, its size unknown', 1000, false],
    ['large, streamed', 5 * (1 << 20) + 3, true],
  ])('should store a %s blob under its SHA-256', async (_label, size, known) => {
    const bytes = randomBytes(size);
    const staged = await store.stage(chunked(bytes), 10 << 20, known ? { expectedBytes: size } : {});
    expect(staged).toMatchObject({ sha256: sha256(bytes), size });
    await store.commit(staged);
    expect(await store.has(staged.sha256)).toBe(true);
    expect((await buffer(store.open(staged.sha256))).equals(bytes)).toBe(true);
    expect(await readdir(join(root, 'staging'))).toEqual([]);
  });

  it.each([
    ['small', 1000],
    ['streamed', 3 * (1 << 20)],
  ])('should make the staging folder again for a %s blob when it was removed', async (_label, size) => {
    await store.commit(await store.stage(chunked(randomBytes(10)), 10 << 20, { expectedBytes: 10 }));
    await rm(join(root, 'staging'), { recursive: true });
    const bytes = randomBytes(size);
    const staged = await store.stage(chunked(bytes), 10 << 20, size <= 1000 ? { expectedBytes: size } : {});
    await store.commit(staged);
    expect((await buffer(store.open(staged.sha256))).equals(bytes)).toBe(true);
    expect(await readdir(join(root, 'staging'))).toEqual([]);
  });

  it('should refuse a blob over the cap and keep nothing of it', async () => {
    const bytes = randomBytes(3 << 20);
    await expect(store.stage(chunked(bytes), 2 << 20)).rejects.toBeInstanceOf(BlobTooLargeError);
    expect(await readdir(join(root, 'staging'))).toEqual([]);
    // The store goes on.
    const next = randomBytes(2 << 20);
    const staged = await store.stage(chunked(next), 2 << 20);
    await store.commit(staged);
    expect((await readFile(join(root, 'blobs', staged.sha256.slice(0, 2), staged.sha256.slice(2, 4), staged.sha256))).equals(next)).toBe(true);
  });

  it('should fail the stage, and keep nothing, when the source fails', async () => {
    let reads = 0;
    const source = new Readable({
      read() {
        if (++reads > 3) this.destroy(new Error('the sandbox went away'));
        else this.push(randomBytes(1 << 20));
      },
    });
    await expect(store.stage(source, 10 << 20)).rejects.toThrow('the sandbox went away');
    expect(await readdir(join(root, 'staging'))).toEqual([]);
  });

  // A streamed blob is flushed as it comes (every 8 MiB, not waited for), through the
  // handle it is written with: a flush must never meet a closed descriptor (or a number
  // reused by another file), and the file must be closed after the stage either way.
  describe('the staging file of a streamed blob', () => {
    const openPaths = async () => {
      const paths: string[] = [];
      for (const fd of await readdir('/proc/self/fd')) paths.push(await readlink(`/proc/self/fd/${fd}`).catch(() => ''));
      return paths;
    };
    let restore: () => void;
    let flushes: string[];

    beforeEach(async () => {
      flushes = [];
      // The real flush starts at once (a synchronous readlink), as the store's call does.
      restore = await wrapFileHandle(root, 'datasync', (datasync) => async function (this: { fd: number }) {
        let path: string;
        try {
          path = readlinkSync(`/proc/self/fd/${this.fd}`);
        } catch {
          path = 'closed';
        }
        await datasync.call(this).then(
          () => flushes.push(path),
          (error: NodeJS.ErrnoException) => flushes.push(`failed: ${error.code}`),
        );
      });
    });

    afterEach(() => restore());

    it('should flush it through its own handle as it comes, and keep no descriptor of it', async () => {
      const bytes = randomBytes(17 << 20);
      const staged = await store.stage(chunked(bytes), 32 << 20);
      await new Promise((resolve) => setImmediate(resolve));
      const path = join(root, 'staging', staged.token);
      expect(flushes.length).toBeGreaterThanOrEqual(1);
      expect(flushes.every((flushed) => flushed === path)).toBe(true);
      expect(await openPaths()).not.toContain(path);
      await store.commit(staged);
      expect((await buffer(store.open(staged.sha256))).equals(bytes)).toBe(true);
    });

    it('should close and remove it when the source fails after a flush started', async () => {
      let reads = 0;
      const source = new Readable({
        read() {
          if (++reads > 9) this.destroy(new Error('the sandbox went away'));
          else this.push(randomBytes(1 << 20));
        },
      });
      await expect(store.stage(source, 32 << 20)).rejects.toThrow('the sandbox went away');
      await new Promise((resolve) => setImmediate(resolve));
      expect(flushes).toHaveLength(1);
      expect(flushes[0]).toMatch(/\/staging\/[0-9a-f-]{36}( \(deleted\))?$/);
      expect(await readdir(join(root, 'staging'))).toEqual([]);
      expect((await openPaths()).some((open) => open.startsWith(join(root, 'staging')))).toBe(false);
    });
  });

  it('should sweep staged copies older than the cutoff and leave newer ones and foreign names', async () => {
    const staging = join(root, 'staging');
    await mkdir(staging);
    const abandoned = randomUUID();
    const notOurs = 'notes.txt';
    await writeFile(join(staging, abandoned), 'left by a crash');
    await writeFile(join(staging, notOurs), 'an operator put this here');
    const old = new Date(Date.now() - 7 * 3600 * 1000);
    await utimes(join(staging, abandoned), old, old);
    await utimes(join(staging, notOurs), old, old);
    // One being staged now, and one staged and waiting for its commit.
    const waiting = await store.stage(chunked(randomBytes(500)), 10 << 20, { expectedBytes: 500 });

    expect(await store.sweepStaging(new Date(Date.now() - 6 * 3600 * 1000))).toBe(1);
    expect((await readdir(staging)).sort()).toEqual([notOurs, waiting.token].sort());
    // The waiting copy still commits.
    await store.commit(waiting);
    expect(await store.has(waiting.sha256)).toBe(true);
    expect(await new LocalBlobStore(join(root, 'nothing-yet')).sweepStaging(new Date())).toBe(0);
  });

  it('should list the stored blobs of one folder written before the cutoff, with their sizes, and nothing else', async () => {
    // Stored contents until two land in one first-level folder, the first of them old.
    const byFolder = new Map<string, { sha256: string; size: number }[]>();
    let folder: string | undefined;
    while (!folder) {
      const bytes = randomBytes(100 + byFolder.size);
      const staged = await store.stage(chunked(bytes), 10 << 20, { expectedBytes: bytes.length });
      await store.commit(staged);
      const list = byFolder.get(staged.sha256.slice(0, 2)) ?? [];
      list.push({ sha256: staged.sha256, size: bytes.length });
      byFolder.set(staged.sha256.slice(0, 2), list);
      if (list.length === 2) folder = staged.sha256.slice(0, 2);
    }
    const [old, recent] = byFolder.get(folder)!;
    const blobFile = (sha: string) => join(root, 'blobs', sha.slice(0, 2), sha.slice(2, 4), sha);
    const longAgo = new Date(Date.now() - 7 * 3600 * 1000);
    await utimes(blobFile(old!.sha256), longAgo, longAgo);
    // Old files whose names are not the hash of their place.
    const misplaced = `${folder}${old!.sha256.slice(2, 4) === '00' ? '01' : '00'}${old!.sha256.slice(4)}`;
    await writeFile(join(root, 'blobs', folder, old!.sha256.slice(2, 4), misplaced), 'x');
    await writeFile(join(root, 'blobs', folder, old!.sha256.slice(2, 4), 'notes.txt'), 'x');
    for (const name of [misplaced, 'notes.txt']) await utimes(join(root, 'blobs', folder, old!.sha256.slice(2, 4), name), longAgo, longAgo);

    const cutoff = new Date(Date.now() - 6 * 3600 * 1000);
    expect(await store.listStored(folder, cutoff)).toEqual([old]);
    expect((await store.listStored(folder, new Date(Date.now() + 60_000))).sort((a, b) => a.sha256.localeCompare(b.sha256))).toEqual(
      [old, recent].sort((a, b) => a!.sha256.localeCompare(b!.sha256)),
    );
    const empty = [...Array(256).keys()].map((n) => n.toString(16).padStart(2, '0')).find((f) => !byFolder.has(f))!;
    expect(await store.listStored(empty, new Date())).toEqual([]);
    await expect(store.listStored('../x', new Date())).rejects.toThrow('not a blob folder');
  });

  // A power loss must not leave a committed row naming bytes the disk never got: the
  // staged bytes reach the disk before they can be committed, and the rename (and any
  // folder it made) before commit resolves. Each fsync is recorded with what existed
  // at that moment.
  describe('durability', () => {
    type Flush = { path: string; blobExists: boolean };
    let flushes: Flush[];
    let restore: () => void;
    let watched: string | undefined;

    beforeEach(async () => {
      flushes = [];
      restore = await wrapFileHandle(root, 'sync', (sync) => async function (this: { fd: number }) {
        const path = await readlink(`/proc/self/fd/${this.fd}`);
        const blobExists = watched ? await stat(watched).then(() => true, () => false) : false;
        await sync.call(this);
        flushes.push({ path, blobExists });
      });
    });

    afterEach(() => restore());

    it.each([
      ['small, its size known', 1000, true],
      ['streamed', 300_000, false],
    ])('should flush a %s blob and its new folders to disk before commit resolves', async (_label, size, known) => {
      const bytes = randomBytes(size);
      const staged = await store.stage(chunked(bytes), 10 << 20, known ? { expectedBytes: size } : {});
      const folder = join(root, 'blobs', staged.sha256.slice(0, 2), staged.sha256.slice(2, 4));
      watched = join(folder, staged.sha256);
      await store.commit(staged);
      // The staged bytes first (a streamed blob's while it is staged, a small one's by
      // commit), nothing under the hash yet.
      expect(flushes[0]).toEqual({ path: join(root, 'staging', staged.token), blobExists: false });
      // The first blob made blobs/, blobs/ab/ and blobs/ab/cd/: each folder's entry is
      // flushed in its parent, the blob's own in its folder, all after the rename.
      const after = flushes.slice(1);
      expect(after.map((f) => f.path).sort()).toEqual([root, join(root, 'blobs'), join(folder, '..'), folder].sort());
      expect(after.every((f) => f.blobExists)).toBe(true);
    });

    it('should flush the bytes of a blob another store staged, having no record of them', async () => {
      const bytes = randomBytes(300_000);
      const staged = await store.stage(chunked(bytes), 10 << 20);
      flushes = [];
      const other = new LocalBlobStore(root);
      try {
        await other.commit(staged);
      } finally {
        await other.close();
      }
      expect(flushes[0]?.path).toBe(join(root, 'staging', staged.token));
      expect((await buffer(store.open(staged.sha256))).equals(bytes)).toBe(true);
    });

    it('should flush the folder again when the same content is committed again', async () => {
      const bytes = randomBytes(2000);
      await store.commit(await store.stage(chunked(bytes), 10 << 20, { expectedBytes: 2000 }));
      const again = await store.stage(chunked(bytes), 10 << 20, { expectedBytes: 2000 });
      watched = undefined;
      flushes = [];
      await store.commit(again);
      expect(flushes.map((f) => f.path)).toEqual([
        join(root, 'staging', again.token),
        join(root, 'blobs', again.sha256.slice(0, 2), again.sha256.slice(2, 4)),
      ]);
    });
  });
});
