import { DrydockError } from '@drydock/core';
import { formatBytes } from '@drydock/vfs';

// Refusals only a backend can make. Everything a thread filesystem can refuse (missing
// file, bad path, ambiguous edit, size limits) is thrown as the VFS's own VfsError, so
// the tool layer renders one set of codes whatever the backend.
export class BackendError extends DrydockError {
  static outsideRoot(path: string) {
    return new BackendError(
      'PATH_OUTSIDE_ROOT',
      `${path} resolves outside the folder this path is confined to (a symbolic link or a path climbing out of it).`,
      403,
    );
  }
  static notARegularFile(path: string) {
    return new BackendError('NOT_A_REGULAR_FILE', `${path} is not a regular file.`, 422);
  }
  static tooLargeToRead(path: string, size: number, max: number) {
    return new BackendError(
      'FILE_TOO_LARGE',
      `${path} is ${formatBytes(size)}, over the ${formatBytes(max)} limit for reading one file from this folder.`,
      413,
      { size, max },
    );
  }
  static readOnly(path: string) {
    return new BackendError('READ_ONLY', `${path} is in a read-only folder; write elsewhere.`, 403);
  }
  static tooManyFiles(path: string, max: number) {
    return new BackendError(
      'TOO_MANY_FILES',
      `More than ${max} files beneath ${path}; search a narrower path.`,
      422,
      { max },
    );
  }
  static invalidConfig(reason: string) {
    return new BackendError('INVALID_BACKEND_CONFIG', `Invalid backend configuration: ${reason}`, 400);
  }
}
