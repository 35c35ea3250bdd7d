import { isUtf8 } from 'node:buffer';
import { pipeline, Readable } from 'node:stream';
import { createGunzip } from 'node:zlib';
import tar from 'tar-stream';
import { normalizePath } from './vfs-path.js';
import { VfsError } from './vfs.errors.js';

// A tar stream (optionally gzipped) turned into the thread files it holds, for bulk
// uploads (POST /v1/threads/:threadId/files/archive). Reading it checks every entry and
// every limit, and throws the first problem, before the caller writes anything.

export interface ReadArchiveOptions {
  gzip: boolean;
  // The normalised folder the archive is unpacked under (`/` for the thread's root).
  under: string;
  // Bytes of the body, and of the tar stream once gunzipped: BODY_TOO_LARGE past it.
  maxBytes: number;
  // Entries of any type: ARCHIVE_TOO_MANY_ENTRIES as soon as one more is read.
  maxEntries: number;
  // One file: FILE_TOO_LARGE, from its header, before its bytes are read.
  maxFileBytes: number;
  // All files together (the tenant's quota; the write checks what it already holds):
  // QUOTA_EXCEEDED as soon as the archive alone is over it.
  maxTotalFileBytes: number;
  // Files in one thread (the write checks the files it already holds): TOO_MANY_FILES
  // as soon as the archive alone is over it.
  maxFiles: number;
}

export interface ArchiveFile {
  path: string;
  content: Buffer;
}

type Entry = { header: tar.Header; resume(): unknown } & AsyncIterable<Buffer>;

const REFUSED_TYPES: Record<string, string> = {
  symlink: 'symbolic link',
  link: 'hard link',
  'character-device': 'character device',
  'block-device': 'block device',
  fifo: 'FIFO',
};

// The thread path of an entry named `name` (UTF-8) when the archive is unpacked under
// `under`. A leading `/` is dropped (names are relative to the archive, as GNU tar
// extracts them), so no name leaves `under`; a `..` component is refused wherever it
// is, even where it would resolve inside the archive. Every other rule is the VFS's own
// (normalizePath): control characters, backslashes, percent-encoded dots, lengths.
// Returns `under` itself for the archive's root (`./`).
export function archiveEntryPath(name: string, under: string): string {
  if (name.split('/').includes('..')) {
    throw VfsError.invalidPath(name, 'an archive entry may not name a parent directory (..)');
  }
  const relative = normalizePath(name);
  if (relative === '/') return under;
  return under === '/' ? relative : normalizePath(`${under}${relative}`);
}

// The entry's name as text. A pax `path` record is UTF-8 by definition (tar-stream has
// decoded it); ustar and GNU long names are bytes, read as latin1 so that every byte
// survives to be checked here: a name that is not UTF-8 has no thread path.
function entryName(header: tar.Header): string {
  const pax = header.pax as Record<string, string> | null | undefined;
  if (pax && Object.hasOwn(pax, 'path')) return header.name;
  const bytes = Buffer.from(header.name, 'latin1');
  if (!isUtf8(bytes)) throw VfsError.invalidPath(bytes.toString('utf8'), 'an archive entry name must be UTF-8');
  return bytes.toString('utf8');
}

// Reads every entry: regular files are kept (in order), directories are checked and
// implied, anything else refuses the whole archive. A path that appears twice is left
// for the write to refuse (INVALID_PATH), as for any other write of several files.
export async function readTarArchive(body: Readable, options: ReadArchiveOptions): Promise<ArchiveFile[]> {
  // (filenameEncoding is an option of tar-stream's extractor its types leave out.)
  const extract = tar.extract({ filenameEncoding: 'latin1' } as Parameters<typeof tar.extract>[0]);
  const read = { bodyBytes: 0 };
  const feeding = feed(tarBytes(body, options, read), extract);
  const entries = extract[Symbol.asyncIterator]() as AsyncIterator<Entry>;
  const files: ArchiveFile[] = [];
  let total = 0;
  let count = 0;
  let finished = false;
  try {
    for (;;) {
      const next = await archiveStep(() => entries.next());
      if (next.done) break;
      const entry = next.value;
      if (++count > options.maxEntries) throw VfsError.archiveTooManyEntries(options.maxEntries);
      const name = entryName(entry.header);
      const type: string = entry.header.type ?? 'unknown';
      if (type === 'directory') {
        archiveEntryPath(name, options.under);
        entry.resume();
        continue;
      }
      if (type !== 'file' && type !== 'contiguous-file') {
        throw VfsError.unsupportedArchiveEntry(name, REFUSED_TYPES[type] ?? `entry of type ${type}`);
      }
      const path = archiveEntryPath(name, options.under);
      if (path === options.under) throw VfsError.invalidPath(name, 'a file entry needs a name');
      const size = entry.header.size ?? 0;
      if (size > options.maxFileBytes) throw VfsError.fileTooLarge(path, size, options.maxFileBytes);
      total += size;
      if (total > options.maxTotalFileBytes) {
        throw VfsError.quotaExceeded(`the files of this archive (${path}, …)`, total, options.maxTotalFileBytes);
      }
      if (files.length + 1 > options.maxFiles) {
        throw VfsError.tooManyFiles(`the files of this archive (${path}, …)`, files.length + 1, options.maxFiles);
      }
      files.push({ path, content: await archiveStep(() => contentOf(entry, size)) });
    }
    finished = true;
  } finally {
    // Stops the feed (it leaves the body to the caller) when an entry was refused.
    if (!finished) extract.destroy();
    await feeding;
  }
  if (read.bodyBytes === 0) throw VfsError.invalidArchive('the body is empty');
  return files;
}

// Errors of the tar and gzip decoders become INVALID_ARCHIVE; the limits' own errors
// (thrown in the feed) pass as they are.
async function archiveStep<T>(step: () => Promise<T>): Promise<T> {
  try {
    return await step();
  } catch (error) {
    if (error instanceof VfsError) throw error;
    throw VfsError.invalidArchive(reasonOf(error));
  }
}

function reasonOf(error: unknown): string {
  const message = error instanceof Error ? error.message : String(error);
  return message.replace(/\.$/, '') || 'it could not be read';
}

async function contentOf(entry: AsyncIterable<Buffer>, size: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of entry) {
    chunks.push(chunk);
    bytes += chunk.length;
  }
  if (bytes !== size) throw VfsError.invalidArchive(`the entry holds ${bytes} bytes, its header says ${size}`);
  return Buffer.concat(chunks, bytes);
}

// The tar bytes of the body, gunzipped when asked, each side counted against maxBytes.
// The body is never destroyed here: once reading stops the caller drains it, so that
// the answer still goes out on the same connection.
function tarBytes(body: Readable, options: ReadArchiveOptions, read: { bodyBytes: number }): AsyncIterable<Buffer> {
  const raw = metered(body.iterator({ destroyOnReturn: false }), options.maxBytes, (n) => (read.bodyBytes = n));
  if (!options.gzip) return raw;
  const gunzip = createGunzip();
  pipeline(Readable.from(raw), gunzip, () => undefined);
  return metered(gunzip, options.maxBytes);
}

async function* metered(chunks: AsyncIterable<Buffer>, max: number, seen?: (bytes: number) => void): AsyncGenerator<Buffer> {
  let bytes = 0;
  for await (const chunk of chunks) {
    bytes += chunk.length;
    seen?.(bytes);
    if (bytes > max) throw VfsError.archiveTooLarge(max);
    yield chunk;
  }
}

// Writes the chunks into the extractor with its backpressure, and ends it; a failure
// (a limit, a gzip error, the body) destroys it with the error, which the reading side
// then throws. Stops as soon as the extractor is destroyed by the reading side.
async function feed(chunks: AsyncIterable<Buffer>, extract: tar.Extract): Promise<void> {
  const gone = () => extract.destroyed || extract.destroying;
  try {
    for await (const chunk of chunks) {
      if (gone()) return;
      if (!extract.write(chunk)) await drained(extract);
    }
    if (!gone()) extract.end(undefined);
  } catch (error) {
    extract.destroy(error instanceof VfsError ? error : VfsError.invalidArchive(reasonOf(error)));
  }
}

function drained(stream: tar.Extract): Promise<void> {
  if (stream.destroyed || stream.destroying) return Promise.resolve();
  return new Promise((resolve) => {
    const done = () => {
      stream.off('drain', done);
      stream.off('close', done);
      resolve();
    };
    stream.on('drain', done);
    stream.on('close', done);
  });
}
