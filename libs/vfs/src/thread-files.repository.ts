// The storage port of the thread filesystem. Every method takes the tenant first and
// refuses an empty one; paths are already normalised by the service. A "live" file is
// one that is not a tombstone (deleted rows stay, content-less, so sync sees deletes).

export interface ThreadFileRecord {
  path: string;
  contentType: string;
  size: number;
  sha256: string;
  version: number;
  // The thread revision at which the file last changed.
  revision: number;
  // Stored as UTF-8 text (searchable, editable) rather than bytes.
  text: boolean;
  createdAt: Date;
  modifiedAt: Date;
}

// What a write stores: exactly one of `text` and `bytes` is set.
export interface FileBody {
  path: string;
  // Text (UTF-8 without NUL), stored searchable, as its UTF-8 bytes: checked, never
  // decoded on the way to the store (a 10 MB archive would otherwise become 10 MB of
  // strings the driver encodes back).
  text: Buffer | null;
  // Anything else: its bytes.
  bytes: Buffer | null;
  contentType: string;
  size: number;
  sha256: string;
}

export interface WritePolicy {
  overwrite: boolean;
  maxFileBytes: number;
  maxTenantBytes: number;
  // Live files one thread may hold (TOO_MANY_FILES past it).
  maxThreadFiles: number;
  // 'skip': new files past maxThreadFiles are left out (absent from the answer) instead
  // of refusing the write, for the container sync, which reports them one by one.
  pastFileLimit?: 'refuse' | 'skip';
}

export interface DirectoryEntryRecord {
  path: string;
  type: 'file' | 'directory';
  // 0 for directories.
  size: number;
  // For a directory, the latest change of anything beneath it.
  modifiedAt: Date;
}

export type PathRecord = { type: 'file'; file: ThreadFileRecord } | { type: 'directory'; modifiedAt: Date | null };

// How grep matches a line. `postgres` is the same regex in PostgreSQL's ARE dialect, or
// null when it has no faithful translation (the service then matches in JS).
export type LineMatcher =
  | { kind: 'literal'; pattern: string; caseInsensitive: boolean }
  | { kind: 'regex'; source: string; postgres: string | null; caseInsensitive: boolean };

// Paths after `after` (exclusive) and up to `through` (inclusive), in path order; an
// absent bound is open.
export interface PathRange {
  after?: string;
  through?: string;
}

export interface LineMatch {
  path: string;
  // 1-based, as `read` numbers lines.
  line: number;
  // The line, cut after 2,001 characters (the service shows 2,000 and an ellipsis).
  text: string;
}

export interface ThreadChanges {
  revision: number;
  changed: ThreadFileRecord[];
  deleted: string[];
}

// Runs inside the write transaction: gets the live text file (text null when binary)
// and returns its new body, or null to change nothing. May throw to abort.
export type TextEdit = (text: string | null, file: ThreadFileRecord) => FileBody | null;

export interface ThreadFilesRepository {
  // A live file, an implied directory (a prefix of live files), or null. `/` is always
  // a directory.
  stat(tenantId: string, threadId: string, path: string): Promise<PathRecord | null>;
  // Direct children of a directory (files and implied directories), sorted by path.
  list(tenantId: string, threadId: string, dir: string): Promise<DirectoryEntryRecord[]>;
  // Paths of live files at or beneath `under`, sorted.
  listPaths(tenantId: string, threadId: string, under: string): Promise<string[]>;
  // Paths that cut the live files at or beneath `under`, in path order, into `parts`
  // ranges of about as many files each (parts - 1 paths, fewer when there are fewer
  // files, none when there is none): where to split a scan without listing every path.
  splitPaths(tenantId: string, threadId: string, under: string, parts: number): Promise<string[]>;
  // A live file with its text (null for a binary file); its bytes are not fetched.
  readText(tenantId: string, threadId: string, path: string): Promise<{ file: ThreadFileRecord; text: string | null } | null>;
  readContent(tenantId: string, threadId: string, path: string): Promise<{ file: ThreadFileRecord; content: Buffer } | null>;

  // Writes all files in one transaction and one thread revision, or none of them: a
  // conflict, a file over the size limit, a tenant over its quota or a thread over its
  // file count changes nothing (with `pastFileLimit: 'skip'`, the new files past the
  // count are left out of the write and of the answer).
  write(
    tenantId: string,
    threadId: string,
    files: FileBody[],
    policy: WritePolicy,
  ): Promise<{ file: ThreadFileRecord; created: boolean }[]>;
  // Read-modify-write of one file under the tenant's write lock (no lost updates).
  // Null when there is no live file at `path`.
  editText(
    tenantId: string,
    threadId: string,
    path: string,
    edit: TextEdit,
    policy: Omit<WritePolicy, 'overwrite' | 'maxThreadFiles' | 'pastFileLimit'>,
  ): Promise<ThreadFileRecord | null>;
  // Tombstones the file at `path` or everything beneath it; returns the deleted paths
  // (sorted), empty when there was nothing.
  remove(tenantId: string, threadId: string, path: string): Promise<string[]>;
  // Tombstones exactly the live files among `paths` (not what is beneath them), in one
  // revision (null when none was live). Returns the deleted paths, sorted.
  removeExact(tenantId: string, threadId: string, paths: string[]): Promise<{ deleted: string[]; revision: number | null }>;
  // Live files among `paths` with their bytes, sorted by path; absent paths are left out.
  readContents(tenantId: string, threadId: string, paths: string[]): Promise<{ file: ThreadFileRecord; content: Buffer }[]>;

  // Live text files at or beneath `under` that contain a matching line, sorted; with a
  // range, only those after `range.after` and up to `range.through` in path order.
  findMatchingFiles(tenantId: string, threadId: string, under: string, matcher: LineMatcher, range?: PathRange): Promise<string[]>;
  // Matching lines of the given files in (path, line) order, at most `limit`. With
  // `fileTest` (the default) a store may test each whole file for the pattern before
  // splitting it into lines: cheaper when most files have no match, dearer when most do.
  // The answer is the same either way.
  matchLines(
    tenantId: string,
    threadId: string,
    paths: string[],
    matcher: LineMatcher,
    limit: number,
    options?: { fileTest?: boolean },
  ): Promise<LineMatch[]>;
  // Number of matching lines per file (files without any are left out), sorted.
  // `fileTest` as for matchLines.
  countLines(
    tenantId: string,
    threadId: string,
    paths: string[],
    matcher: LineMatcher,
    options?: { fileTest?: boolean },
  ): Promise<{ path: string; count: number }[]>;

  // The thread's revision: 0 before its first change, then moved by every change.
  revision(tenantId: string, threadId: string): Promise<number>;
  // Files changed and paths deleted after `revision`, with the current revision, read
  // from one snapshot.
  changesSince(tenantId: string, threadId: string, revision: number): Promise<ThreadChanges>;
}

export const THREAD_FILES_REPOSITORY = Symbol('THREAD_FILES_REPOSITORY');
