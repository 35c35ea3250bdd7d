import { createHash, randomUUID } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, rename, rm, stat, unlink } from 'node:fs/promises';
import { join } from 'node:path';
import type { Readable } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { Transform } from 'node:stream';

// Content-addressed storage of artifact bytes. A blob is staged (streamed to a private
// temporary file, hashed and size-capped on the way), then committed under its SHA-256
// or discarded. Commit and removal are called by the artifacts repository under the
// blob's row lock, so an ingest and a garbage collection of the same content never
// interleave.
export interface StagedBlob {
  sha256: string;
  size: number;
  // Opaque to callers: where the staged bytes wait.
  readonly token: string;
}

export class BlobTooLargeError extends Error {
  constructor(readonly maxBytes: number) {
    super(`the content exceeds ${maxBytes} bytes`);
  }
}

export interface BlobStore {
  // Streams `source` into a staging area; rejects with BlobTooLargeError (and keeps
  // nothing) as soon as more than `maxBytes` arrive.
  stage(source: Readable, maxBytes: number): Promise<StagedBlob>;
  // Makes a staged blob readable under its hash; a no-op copy when the content is
  // already stored (the staged copy is dropped).
  commit(staged: StagedBlob): Promise<void>;
  discard(staged: StagedBlob): Promise<void>;
  has(sha256: string): Promise<boolean>;
  // Bytes [start, end] inclusive, or all of them.
  open(sha256: string, range?: { start: number; end: number }): Readable;
  remove(sha256: string): Promise<void>;
}

export const BLOB_STORE = Symbol('BLOB_STORE');

const SHA256 = /^[0-9a-f]{64}$/;

// Buffered bytes between the source and the staging file. At the streams' default
// (16 KiB) every 64 KiB chunk from the archive waits for its own disk write, so reading
// and writing take turns; with 1 MiB they overlap and chunks are written together
// (writev). Measured on a 100 MB artifact: 1.9x `docker cp` at 16 KiB, 1.2x at 1 MiB.
const STAGING_BUFFER_BYTES = 1 << 20;

// Blobs in a local folder: `<root>/blobs/ab/cd/<sha256>`, staged in `<root>/staging`
// (same filesystem, so commit is an atomic rename: a crash never leaves a partial blob
// under a hash). The folder is the operator's; nothing in it is reachable from a
// container.
export class LocalBlobStore implements BlobStore {
  constructor(private readonly root: string) {}

  private pathOf(sha256: string): string {
    if (!SHA256.test(sha256)) throw new Error(`not a SHA-256: ${sha256}`);
    return join(this.root, 'blobs', sha256.slice(0, 2), sha256.slice(2, 4), sha256);
  }

  private stagingPath(token: string): string {
    if (!/^[0-9a-f-]{36}$/.test(token)) throw new Error('not a staging token');
    return join(this.root, 'staging', token);
  }

  async stage(source: Readable, maxBytes: number): Promise<StagedBlob> {
    const token = randomUUID();
    const path = this.stagingPath(token);
    await mkdir(join(this.root, 'staging'), { recursive: true, mode: 0o700 });
    const hash = createHash('sha256');
    let size = 0;
    const meter = new Transform({
      highWaterMark: STAGING_BUFFER_BYTES,
      transform(chunk: Buffer, _enc, done) {
        size += chunk.length;
        if (size > maxBytes) return done(new BlobTooLargeError(maxBytes));
        hash.update(chunk);
        done(null, chunk);
      },
    });
    try {
      await pipeline(source, meter, createWriteStream(path, { flags: 'wx', mode: 0o600, highWaterMark: STAGING_BUFFER_BYTES }));
    } catch (error) {
      await rm(path, { force: true });
      throw error;
    }
    return { sha256: hash.digest('hex'), size, token };
  }

  async commit(staged: StagedBlob): Promise<void> {
    const target = this.pathOf(staged.sha256);
    const source = this.stagingPath(staged.token);
    if (await this.has(staged.sha256)) {
      await unlink(source);
      return;
    }
    await mkdir(join(target, '..'), { recursive: true, mode: 0o700 });
    await rename(source, target);
  }

  async discard(staged: StagedBlob): Promise<void> {
    await rm(this.stagingPath(staged.token), { force: true });
  }

  async has(sha256: string): Promise<boolean> {
    try {
      return (await stat(this.pathOf(sha256))).isFile();
    } catch {
      return false;
    }
  }

  open(sha256: string, range?: { start: number; end: number }): Readable {
    return createReadStream(this.pathOf(sha256), range ? { start: range.start, end: range.end } : {});
  }

  async remove(sha256: string): Promise<void> {
    await rm(this.pathOf(sha256), { force: true });
  }
}
