import { createHash, randomBytes } from 'node:crypto';
import { mkdtemp, readdir, readFile, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import { buffer } from 'node:stream/consumers';
import { BlobTooLargeError, LocalBlobStore } from './blob-store.js';

const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

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
});
