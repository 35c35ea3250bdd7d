import type { FileBody, WritePolicy } from './thread-files.repository.js';
import { ancestorsOf } from './vfs-path.js';
import { VfsError } from './vfs.errors.js';

// What a write transaction sees, once it holds the tenant's lock, about the paths it
// is about to write. Every repository implementation gathers this and applies the same
// rules below, so the in-memory fake and PostgreSQL agree.
export interface WriteState {
  // The tenant's stored bytes (all threads).
  storageBytes: number;
  // Live files in the written thread.
  threadFiles: number;
  // Rows stored at the written paths, tombstones included.
  existing: Map<string, { size: number; deleted: boolean }>;
  // Ancestors of written paths that are live files.
  fileAncestors: Set<string>;
  // Written paths with live files beneath them (implied directories).
  directories: Set<string>;
}

// What a write stores once checked: the files (all of them, unless new files past the
// thread's file count were skipped), the change in the tenant's stored bytes, and how
// many of the files are new to the thread.
export interface WritePlan {
  files: FileBody[];
  bytes: number;
  created: number;
}

// Checks a batch against the state and the limits. Throws the first conflict found, so
// nothing is written.
export function planWrite(files: FileBody[], state: WriteState, policy: WritePolicy): WritePlan {
  const batch = new Set<string>();
  for (const file of files) {
    if (batch.has(file.path)) throw VfsError.invalidPath(file.path, 'it appears twice in one write');
    batch.add(file.path);
  }
  let delta = 0;
  let created = 0;
  const kept: FileBody[] = [];
  for (const file of files) {
    if (file.size > policy.maxFileBytes) throw VfsError.fileTooLarge(file.path, file.size, policy.maxFileBytes);
    if (file.path === '/' || state.directories.has(file.path)) throw VfsError.isADirectory(file.path);
    for (const ancestor of ancestorsOf(file.path)) {
      if (state.fileAncestors.has(ancestor) || batch.has(ancestor)) throw VfsError.ancestorIsFile(file.path, ancestor);
    }
    const old = state.existing.get(file.path);
    const live = old !== undefined && !old.deleted;
    if (live && !policy.overwrite) throw VfsError.fileExists(file.path);
    if (!live && state.threadFiles + created >= policy.maxThreadFiles && policy.pastFileLimit === 'skip') continue;
    if (!live) created++;
    delta += file.size - (live ? old.size : 0);
    kept.push(file);
  }
  // Like the bytes: a write that adds no file is always allowed, even over a lowered limit.
  if (created > 0 && state.threadFiles + created > policy.maxThreadFiles) {
    throw VfsError.tooManyFiles(
      files.length === 1 ? files[0]!.path : `${files.length} files (${created} new)`,
      state.threadFiles + created,
      policy.maxThreadFiles,
    );
  }
  // A write that shrinks the total is always allowed, even over a lowered quota.
  if (delta > 0 && state.storageBytes + delta > policy.maxTenantBytes) {
    const largest = kept.reduce((a, b) => (b.size > a.size ? b : a));
    throw VfsError.quotaExceeded(
      kept.length === 1 ? largest.path : `${kept.length} files (${largest.path}, …)`,
      state.storageBytes + delta,
      policy.maxTenantBytes,
    );
  }
  return { files: kept, bytes: delta, created };
}
