import { DrydockError } from '@drydock/core';

const MB = 1024 * 1024;
// "1.5 MB", "12 KB", "300 bytes": sizes people and models can read at a glance.
export function formatBytes(bytes: number): string {
  if (bytes >= MB) return `${+(bytes / MB).toFixed(1)} MB`;
  if (bytes >= 1024) return `${+(bytes / 1024).toFixed(1)} KB`;
  return `${bytes} bytes`;
}

// Failures of the thread filesystem. Messages are sentences an agent can act on; the
// code and status are stable (the gateway maps them, tests assert them).
export class VfsError extends DrydockError {
  static invalidPath(input: string, reason: string) {
    return new VfsError('INVALID_PATH', `Invalid path ${JSON.stringify(input)}: ${reason}.`, 400);
  }
  static fileNotFound(path: string) {
    return new VfsError('FILE_NOT_FOUND', `No file or directory at ${path}.`, 404);
  }
  static isADirectory(path: string) {
    return new VfsError('IS_A_DIRECTORY', `${path} is a directory, not a file.`, 409);
  }
  static fileExists(path: string) {
    return new VfsError(
      'FILE_EXISTS',
      `${path} already exists; overwrite it explicitly or edit it instead.`,
      409,
    );
  }
  // Writing /a/b/c when /a is a file: POSIX says ENOTDIR; here it is a conflict with
  // an existing file, so FILE_EXISTS, naming the file in the way.
  static ancestorIsFile(path: string, ancestor: string) {
    return new VfsError(
      'FILE_EXISTS',
      `Cannot create ${path}: ${ancestor} is a file, not a directory.`,
      409,
      { ancestor },
    );
  }
  static emptyOldString(path: string) {
    return new VfsError(
      'STRING_NOT_FOUND',
      `The text to replace in ${path} is empty; give the exact text to replace.`,
      422,
    );
  }
  static stringNotFound(path: string) {
    return new VfsError(
      'STRING_NOT_FOUND',
      `The text to replace was not found in ${path}; read the file and copy the text exactly, including whitespace.`,
      422,
    );
  }
  static ambiguousMatch(path: string, occurrences: number) {
    return new VfsError(
      'AMBIGUOUS_MATCH',
      `The text to replace occurs ${occurrences} times in ${path}; include more surrounding text to make it unique, or replace all occurrences.`,
      422,
      { occurrences },
    );
  }
  static fileTooLarge(path: string, size: number, max: number) {
    return new VfsError(
      'FILE_TOO_LARGE',
      `${path} would be ${formatBytes(size)}, over the ${formatBytes(max)} limit for one file.`,
      413,
      { size, max },
    );
  }
  static quotaExceeded(path: string, total: number, max: number) {
    return new VfsError(
      'QUOTA_EXCEEDED',
      `Writing ${path} would bring this tenant's files to ${formatBytes(total)}, over its ${formatBytes(max)} quota; delete files first.`,
      429,
      { total, max },
    );
  }
  // The tenant's per-thread file count (tenant limit `maxFilesPerThread`, default
  // VFS_MAX_FILES_PER_THREAD): a sandbox mirrors every file of its thread at start, so
  // the count is bounded where the bytes are not enough. 422, not 429 like the bytes
  // quota: waiting does not help, deleting files does.
  static tooManyFiles(what: string, total: number, max: number) {
    return new VfsError(
      'TOO_MANY_FILES',
      `Writing ${what} would bring this thread to ${total} files, over its limit of ${max}; delete files or use another thread.`,
      422,
      { total, max },
    );
  }
  static notATextFile(path: string, contentType: string) {
    return new VfsError(
      'NOT_A_TEXT_FILE',
      `${path} is a binary file (${contentType}); it cannot be edited or read as text.`,
      422,
    );
  }
  static invalidPattern(pattern: string, reason: string) {
    return new VfsError('INVALID_PATTERN', `Invalid pattern ${JSON.stringify(pattern)}: ${reason}.`, 400);
  }
  static searchTimeout(pattern: string, ms: number) {
    return new VfsError(
      'SEARCH_TIMEOUT',
      `The pattern ${JSON.stringify(pattern)} took longer than ${ms} ms to match; simplify it or search a narrower path.`,
      422,
    );
  }
  // Bulk uploads (vfs-archive.ts). A body that is not a tar (or gzip) stream, or is cut
  // short: nothing of it is written.
  static invalidArchive(reason: string) {
    return new VfsError('INVALID_ARCHIVE', `The body is not a readable tar archive: ${reason}.`, 400);
  }
  // Symlinks, hard links, devices, FIFOs and unknown entry types: thread files are
  // regular files only, and a link could not be kept as what it says.
  static unsupportedArchiveEntry(name: string, type: string) {
    return new VfsError(
      'UNSUPPORTED_ARCHIVE_ENTRY',
      `The archive entry ${JSON.stringify(name)} is a ${type}; only regular files and directories can be uploaded, so nothing was written.`,
      400,
      { entry: name, type },
    );
  }
  // Counted as the entries are read (directories too: each costs a header to parse),
  // so a small body of many empty files is refused without reading the rest.
  static archiveTooManyEntries(max: number) {
    return new VfsError(
      'ARCHIVE_TOO_MANY_ENTRIES',
      `The archive holds more than ${max} entries, the most one upload may hold; nothing was written. Upload it in parts.`,
      413,
      { max },
    );
  }
  static archiveTooLarge(max: number) {
    return new VfsError(
      'BODY_TOO_LARGE',
      `The archive is larger than the ${formatBytes(max)} one upload may hold (uncompressed); upload it in parts.`,
      413,
      { max },
    );
  }
}
