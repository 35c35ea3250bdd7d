import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import tar from 'tar-stream';
import type { ReadSkipReason, SessionFileRead } from '@drydock/execution';

// Tar streams out of the Docker archive API on a sandbox's /session volume, for an
// image whose supervisor cannot send files itself (docs/decisions/013); files go in
// over the host channel only (fs-write). Paths on this side are
// relative to /session with a leading slash ("/out/summary.csv").

export const SESSION_ROOT = '/session';

// Maps a name in an archive of `requested` (an absolute container path the daemon was
// asked for) to a session path, or null when it is not strictly inside /session. The
// daemon names entries from the basename of the requested path.
export function sessionPathOfEntry(requested: string, entryName: string): string | null {
  if (entryName.startsWith('/') || entryName.includes('\0')) return null;
  const parts = entryName.split('/').filter((p) => p !== '' && p !== '.');
  if (parts.length === 0 || parts.includes('..')) return null;
  const full = posix.join(posix.dirname(requested), ...parts);
  if (!full.startsWith(`${SESSION_ROOT}/`)) return null;
  return full.slice(SESSION_ROOT.length);
}

const TYPE_REASONS: Record<string, ReadSkipReason> = {
  symlink: 'symlink',
  link: 'hardlink',
  'character-device': 'device',
  'block-device': 'device',
  fifo: 'fifo',
  directory: 'directory',
};

// Reads the regular files named in `wanted` out of an archive of `requested`. Entries
// that are not regular files (symlinks, hard links, devices, FIFOs, directories) are
// never read; their bytes, and anything not wanted, are drained unbuffered. Files over
// `maxFileBytes` are skipped from their header, before any byte is kept. Yields every
// wanted path exactly once: read, or skipped with the reason, or `vanished`.
export async function* readSessionArchive(
  archive: Readable,
  requested: string,
  wanted: ReadonlySet<string>,
  maxFileBytes: number,
): AsyncGenerator<SessionFileRead> {
  const extract = tar.extract();
  archive.on('error', (error) => extract.destroy(error));
  archive.pipe(extract as unknown as NodeJS.WritableStream);
  const answered = new Set<string>();
  try {
    for await (const entry of extract) {
      const path = sessionPathOfEntry(requested, entry.header.name);
      if (path === null || !wanted.has(path) || answered.has(path)) {
        entry.resume();
        continue;
      }
      const type = entry.header.type ?? 'file';
      if (type !== 'file' && type !== 'contiguous-file') {
        // A directory entry of a wanted path: the file became a directory. Its contents
        // are other paths and are judged on their own.
        entry.resume();
        answered.add(path);
        yield { path, skipped: TYPE_REASONS[type] ?? 'other' };
        continue;
      }
      const size = entry.header.size ?? 0;
      if (size > maxFileBytes) {
        entry.resume();
        answered.add(path);
        yield { path, skipped: 'too-large' };
        continue;
      }
      const chunks: Buffer[] = [];
      let bytes = 0;
      for await (const chunk of entry as AsyncIterable<Buffer>) {
        bytes += chunk.length;
        if (bytes > maxFileBytes) throw new Error(`${path}: more bytes than its tar header announced`);
        chunks.push(chunk);
      }
      answered.add(path);
      yield { path, content: Buffer.concat(chunks, bytes) };
    }
  } finally {
    // Stops reading the daemon's response when the caller stopped early.
    archive.destroy();
  }
  for (const path of wanted) if (!answered.has(path)) yield { path, skipped: 'vanished' };
}

// One entry of an archive of a /session directory, for streaming consumers (artifact
// ingestion). `content` holds the bytes of a regular file; the consumer reads it or
// leaves it, and the walk drains what is left before the next entry.
export interface SessionArchiveEntry {
  path: string;
  kind: 'file' | ReadSkipReason;
  size: number;
  content: Readable;
}

// Walks an archive of `requested`, yielding every entry strictly inside /session
// (directories included as kind `directory`) and dropping any other name.
export async function* walkSessionArchive(archive: Readable, requested: string): AsyncGenerator<SessionArchiveEntry> {
  const extract = tar.extract();
  archive.on('error', (error) => extract.destroy(error));
  archive.pipe(extract as unknown as NodeJS.WritableStream);
  try {
    for await (const entry of extract) {
      const path = sessionPathOfEntry(requested, entry.header.name);
      const type = entry.header.type ?? 'file';
      if (path !== null) {
        const kind = type === 'file' || type === 'contiguous-file' ? 'file' : (TYPE_REASONS[type] ?? 'other');
        yield { path, kind, size: entry.header.size ?? 0, content: entry as unknown as Readable };
      }
      entry.resume();
    }
  } finally {
    archive.destroy();
  }
}
