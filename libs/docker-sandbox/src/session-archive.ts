import { posix } from 'node:path';
import type { Readable } from 'node:stream';
import tar from 'tar-stream';
import type { ReadSkipReason, SessionFileIn, SessionFileRead } from '@drydock/execution';

// Tar streams for the Docker archive API on a sandbox's /session volume
// (docs/decisions/004-session-volume-and-file-sync.md). Paths on this side are
// relative to /session with a leading slash ("/out/summary.csv").

export const SESSION_ROOT = '/session';

const FILE_MODE = 0o644;
const DIR_MODE = 0o755;

// A tar stream that puts `files` under /session, with an explicit entry for every
// parent directory: the daemon would otherwise create missing parents owned by root,
// and the sandbox user could not write in them.
export function packSessionFiles(files: SessionFileIn[], owner: { uid: number; gid: number }): Readable {
  const pack = tar.pack();
  const dirs = new Set<string>();
  for (const file of files) {
    const rel = relativeName(file.path);
    const parts = rel.split('/');
    for (let i = 1; i < parts.length; i++) {
      const dir = parts.slice(0, i).join('/');
      if (dirs.has(dir)) continue;
      dirs.add(dir);
      pack.entry({ name: `${dir}/`, type: 'directory', mode: DIR_MODE, mtime: file.modifiedAt, ...owner });
    }
    pack.entry(
      { name: rel, type: 'file', size: file.content.length, mode: FILE_MODE, mtime: file.modifiedAt, ...owner },
      file.content,
    );
  }
  pack.finalize();
  return pack as unknown as Readable;
}

// "/a/b" -> "a/b", refusing anything that is not a plain relative name once inside.
function relativeName(path: string): string {
  const rel = path.replace(/^\/+/, '');
  const parts = rel.split('/');
  if (!rel || parts.some((p) => p === '' || p === '.' || p === '..' || p.includes('\0'))) {
    throw new Error(`not a session path: ${JSON.stringify(path)}`);
  }
  return rel;
}

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
