import type { Readable } from 'node:stream';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig, TENANTS_REPOSITORY, type TenantsRepository, Utf8Builder } from '@drydock/core';
import {
  THREAD_FILES_REPOSITORY,
  type LineMatch,
  type LineMatcher,
  type PathRange,
  type ThreadFileRecord,
  type FileBody,
  type ThreadFilesRepository,
  type WritePolicy,
} from './thread-files.repository.js';
import { readTarArchive } from './vfs-archive.js';
import { fileBody } from './vfs-content.js';
import {
  compileGlob,
  globPattern,
  grepGlobFilter,
  grepLimits,
  grepResult,
  narrowGlobBase,
  searchPattern,
  shownLine,
  wholeNumber,
  type GrepMode,
  type GrepOptions,
  type GrepResult,
} from './search/index.js';
import { countLines, DEFAULT_READ_LIMIT, numberLines } from './vfs-lines.js';
import { evenCuts, normalizePath, relativeTo } from './vfs-path.js';
import { VfsError } from './vfs.errors.js';


export interface ThreadScope {
  tenantId: string;
  threadId: string;
}

export interface VfsEntry {
  path: string;
  type: 'file' | 'directory';
  size: number;
  modifiedAt: Date | null;
}

export interface VfsFileInfo {
  path: string;
  type: 'file';
  size: number;
  contentType: string;
  sha256: string;
  version: number;
  revision: number;
  createdAt: Date;
  modifiedAt: Date;
  text: boolean;
}


// What a bulk upload wrote: every file in one revision.
export interface ArchiveWriteResult {
  // The folder the archive was unpacked under.
  path: string;
  written: number;
  // Of `written`, the files that did not exist before (the others were replaced).
  created: number;
  bytes: number;
  // The thread's revision after the write (unchanged when the archive held no file).
  revision: number;
}

export interface WriteOptions {
  // Default true (PUT semantics); false refuses an existing file with FILE_EXISTS.
  overwrite?: boolean;
  contentType?: string;
}

// Files hashed and typed between two turns of the event loop in a bulk write.
const BODIES_PER_TURN = 500;
const nextTurn = () => new Promise<void>((resolve) => setImmediate(resolve));

// Files per statement when grep walks the files under its path.
const GREP_FILES_PER_QUERY = 500;
// Statements of one grep running at once (two cores' worth of line splitting).
const GREP_QUERIES_IN_FLIGHT = 2;
// Lines per piece of grepJson's answer: ~200 bytes each, a piece stays well under V8's
// large-object size (128 KB) unless its lines are near MAX_LINE_CHARS.
const JSON_PIECE_LINES = 200;
// Content and count grep stop testing whole files before splitting them once this share
// of a statement's files had a matching line: the test then saves little splitting and reads
// most files twice (bench/vfs, 500 files of 10 KiB: 33 ms with it, 28 ms without, for a
// literal in 97 % of them; 10 ms against 22 ms for one in none).
const FILE_TEST_MAX_SHARE = 0.75;

// One grep: where, what, how it answers, and the glob filter on paths.
interface GrepSearch {
  scope: ThreadScope;
  under: string;
  matcher: LineMatcher;
  mode: GrepMode;
  max: number;
  filter: ((path: string) => boolean) | null;
}

// The files a count or content grep reads, in path order.
type GrepWalk = Pick<GrepSearch, 'scope' | 'under' | 'matcher' | 'filter'> & { files: string[] };

function toInfo(file: ThreadFileRecord): VfsFileInfo {
  return { ...file, type: 'file' };
}


function countOccurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

// Reads chunk after chunk with GREP_QUERIES_IN_FLIGHT statements at once (each
// PostgreSQL backend splits its files into lines on a core of its own) and hands the
// answers to `take` in chunk order, so the result is the one a single statement would
// give. `take` answers true for more; 'drain' to ask for no further chunk but take the
// answers already on their way; false when it has enough: nothing more is asked for or
// taken (a statement still in flight is left to finish, unawaited).
async function inOrder<C, R>(chunks: Iterator<C>, read: (chunk: C) => Promise<R>, take: (answer: R) => boolean | 'drain'): Promise<void> {
  const inFlight: Promise<R>[] = [];
  let asking = true;
  const ask = () => {
    const next = asking ? chunks.next() : { done: true as const };
    if (!next.done) inFlight.push(read(next.value));
  };
  for (let i = 0; i < GREP_QUERIES_IN_FLIGHT; i++) ask();
  try {
    while (inFlight.length > 0) {
      const wanted = take(await inFlight.shift()!);
      if (wanted === false) return;
      if (wanted === 'drain') asking = false;
      ask();
    }
  } finally {
    for (const left of inFlight) left.catch(() => undefined);
  }
}

// Consecutive path ranges cut at the sorted `cuts`, the first after `after` (from the
// start when absent), the last open: together every path after `after`.
function rangesBetween(cuts: string[], after?: string): PathRange[] {
  const ranges: PathRange[] = [];
  let from = after;
  for (const cut of cuts) {
    ranges.push({ after: from, through: cut });
    from = cut;
  }
  ranges.push({ after: from });
  return ranges;
}

function* chunked<T>(items: T[], size: number): Generator<T[]> {
  for (let i = 0; i < items.length; i += size) yield items.slice(i, i + size);
}

// The thread filesystem: paths are normalised here, at every entry point, and the
// rules live here; storage and its transactions are behind THREAD_FILES_REPOSITORY.
@Injectable()
export class VfsService {
  constructor(
    @Inject(THREAD_FILES_REPOSITORY) private readonly files: ThreadFilesRepository,
    @Inject(TENANTS_REPOSITORY) private readonly tenants: TenantsRepository,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  // Direct children of a directory, sorted; a file path lists that file alone.
  async ls(scope: ThreadScope, path = '/'): Promise<VfsEntry[]> {
    const dir = normalizePath(path);
    const entries = await this.files.list(scope.tenantId, scope.threadId, dir);
    if (entries.length > 0 || dir === '/') return entries;
    const found = await this.files.stat(scope.tenantId, scope.threadId, dir);
    if (found?.type === 'file') {
      return [{ path: dir, type: 'file', size: found.file.size, modifiedAt: found.file.modifiedAt }];
    }
    throw VfsError.fileNotFound(dir);
  }

  // `cat -n` of `limit` lines (default 500) from the 0-based line `offset`. Binary and
  // empty files, and an offset past the end, answer with a sentence instead.
  async read(scope: ThreadScope, path: string, options: { offset?: number; limit?: number } = {}): Promise<string> {
    const p = normalizePath(path);
    const offset = wholeNumber(options.offset, 0, 0);
    const limit = wholeNumber(options.limit, DEFAULT_READ_LIMIT, 1);
    const found = await this.files.readText(scope.tenantId, scope.threadId, p);
    if (!found) throw await this.missing(scope, p);
    const { file, text } = found;
    if (text === null) {
      return `${p} is a binary file (${file.contentType}, ${file.size} bytes); download it instead.`;
    }
    if (text === '') return `${p} is empty.`;
    const body = numberLines(text, offset, limit);
    if (body !== null) return body;
    const lines = countLines(text);
    return `${p} has ${lines} line${lines === 1 ? '' : 's'}; offset ${offset} is past its end (offsets start at 0).`;
  }

  async readContent(scope: ThreadScope, path: string): Promise<{ info: VfsFileInfo; content: Buffer }> {
    const p = normalizePath(path);
    const found = await this.files.readContent(scope.tenantId, scope.threadId, p);
    if (!found) throw await this.missing(scope, p);
    return { info: toInfo(found.file), content: found.content };
  }

  async write(
    scope: ThreadScope,
    path: string,
    content: string | Buffer,
    options: WriteOptions = {},
  ): Promise<{ info: VfsFileInfo; created: boolean }> {
    const [result] = await this.writeMany(scope, [{ path, content, contentType: options.contentType }], options);
    return result;
  }

  // Several files in one transaction and one thread revision: all are written or none
  // (for bulk uploads and the container sync). With `pastFileLimit: 'skip'` (the
  // container sync), new files past the thread's file limit are left out of the write
  // and of the answer instead of refusing it.
  async writeMany(
    scope: ThreadScope,
    files: { path: string; content: string | Buffer; contentType?: string }[],
    options: Pick<WriteOptions, 'overwrite'> & { pastFileLimit?: 'refuse' | 'skip' } = {},
  ): Promise<{ info: VfsFileInfo; created: boolean }[]> {
    const bodies: FileBody[] = [];
    for (const f of files) {
      // Hashing and typing 20,000 files is ~1 s of CPU: other requests get a turn.
      if (bodies.length > 0 && bodies.length % BODIES_PER_TURN === 0) await nextTurn();
      bodies.push(fileBody(normalizePath(f.path), f.content, f.contentType));
    }
    const policy = { ...(await this.policy(scope.tenantId, options.overwrite ?? true)), pastFileLimit: options.pastFileLimit };
    for (const body of bodies) {
      if (body.size > policy.maxFileBytes) throw VfsError.fileTooLarge(body.path, body.size, policy.maxFileBytes);
    }
    const written = await this.files.write(scope.tenantId, scope.threadId, bodies, policy);
    return written.map((w) => ({ info: toInfo(w.file), created: w.created }));
  }

  // A tar stream (gzipped with `gzip`) unpacked under `under`: its regular files become
  // thread files, written by writeMany (one transaction, one revision, all or none) once
  // the whole archive is read and every entry passed the path rules and the limits
  // (vfs-archive.ts). The body is read as it streams, never past VFS_MAX_ARCHIVE_BYTES;
  // when this throws, the caller drains what is left of it.
  async writeArchive(scope: ThreadScope, body: Readable, options: { under?: string; gzip?: boolean } = {}): Promise<ArchiveWriteResult> {
    const under = normalizePath(options.under ?? '/');
    const { maxFileBytes, maxTenantBytes, maxThreadFiles } = await this.policy(scope.tenantId, true);
    const files = await readTarArchive(body, {
      gzip: options.gzip ?? false,
      under,
      maxBytes: this.config.vfs.maxArchiveBytes,
      maxEntries: this.config.vfs.maxArchiveEntries,
      maxFileBytes,
      maxTotalFileBytes: maxTenantBytes,
      maxFiles: maxThreadFiles,
    });
    const written = await this.writeMany(scope, files);
    return {
      path: under,
      written: written.length,
      created: written.filter((w) => w.created).length,
      bytes: written.reduce((sum, w) => sum + w.info.size, 0),
      revision: written[0]?.info.revision ?? (await this.revision(scope)),
    };
  }

  // Replaces an exact string: it must occur once, or `replaceAll` replaces every
  // (non-overlapping) occurrence. `occurrences` is the number replaced. An empty
  // `oldString` is STRING_NOT_FOUND; `oldString === newString` validates but writes
  // nothing.
  async edit(
    scope: ThreadScope,
    path: string,
    oldString: string,
    newString: string,
    replaceAll = false,
  ): Promise<{ path: string; occurrences: number }> {
    const p = normalizePath(path);
    if (typeof oldString !== 'string' || oldString === '') throw VfsError.emptyOldString(p);
    if (typeof newString !== 'string') throw new TypeError('edit: newString must be a string');
    const { maxFileBytes, maxTenantBytes } = await this.policy(scope.tenantId, true);
    let occurrences = 0;
    const updated = await this.files.editText(
      scope.tenantId,
      scope.threadId,
      p,
      (text, file) => {
        if (text === null) throw VfsError.notATextFile(p, file.contentType);
        occurrences = countOccurrences(text, oldString);
        if (occurrences === 0) throw VfsError.stringNotFound(p);
        if (occurrences > 1 && !replaceAll) throw VfsError.ambiguousMatch(p, occurrences);
        if (oldString === newString) return null;
        const at = text.indexOf(oldString);
        const next = replaceAll
          ? text.split(oldString).join(newString)
          : text.slice(0, at) + newString + text.slice(at + oldString.length);
        return fileBody(p, next, file.contentType);
      },
      { maxFileBytes, maxTenantBytes },
    );
    if (!updated) throw await this.missing(scope, p);
    return { path: p, occurrences };
  }

  // Files matching a picomatch pattern (`*`, `**`, `?`, `[...]`, `{a,b}`, dotfiles
  // included), relative to `path`; a pattern starting with `/` is matched against
  // absolute paths. Absolute paths, sorted.
  async glob(scope: ThreadScope, pattern: string, path = '/'): Promise<string[]> {
    const base = normalizePath(path);
    const { pattern: pat, absolute } = globPattern(pattern);
    const match = compileGlob(pat);
    const under = narrowGlobBase(base, pat, absolute);
    if (under === null) return [];
    const paths = await this.files.listPaths(scope.tenantId, scope.threadId, under);
    const found = paths.filter((p) => match(absolute ? p : relativeTo(p, base)));
    if (found.length === 0 && paths.length === 0) await this.assertExists(scope, base);
    return found;
  }

  // Lines containing `pattern` (literal by default; with `regex`, a JavaScript regular
  // expression) in text files at or beneath `path`; binary files are skipped. The regex
  // policy is the search module's (search/search-pattern.ts): PostgreSQL runs every
  // tenant regex, under the connection's statement timeout, never this process.
  async grep(scope: ThreadScope, pattern: string, options: GrepOptions = {}): Promise<GrepResult> {
    const search = this.grepSearch(scope, pattern, options);
    if (search.mode !== 'content') return this.grepFilesOrCounts(search);
    const matches: LineMatch[] = [];
    const truncated = await this.grepLines(search, (lines) => {
      for (const m of lines) matches.push(m);
    });
    return grepResult('content', { matches }, truncated, search.max, null);
  }

  // The same answer as grep(), as JSON (the REST route's body, its UTF-8 bytes). A
  // content grep's lines are serialized as each statement answers, so the 45,000 line
  // objects of a large answer die young instead of living until the whole answer is
  // serialized, and the answer is ready as the last statement returns. They are
  // serialized JSON_PIECE_LINES at a time, each piece a string small enough for the young
  // generation, encoded straight into chunks of bytes joined once (Utf8Builder): no
  // string of the answer's size is ever made (bench/vfs's 45,594-line grep: see
  // bench/README.md).
  async grepJson(scope: ThreadScope, pattern: string, options: GrepOptions = {}): Promise<Buffer> {
    const search = this.grepSearch(scope, pattern, options);
    if (search.mode !== 'content') return Buffer.from(JSON.stringify(await this.grepFilesOrCounts(search)), 'utf8');
    const out = new Utf8Builder();
    out.write('{"mode":"content","matches":[');
    let first = true;
    const truncated = await this.grepLines(search, (lines) => {
      // Rows of the store are { path, line, text }, nothing else (ThreadFilesRepository).
      for (let i = 0; i < lines.length; i += JSON_PIECE_LINES) {
        const piece = JSON.stringify(lines.slice(i, i + JSON_PIECE_LINES));
        if (!first) out.write(',');
        out.write(piece.slice(1, -1));
        first = false;
      }
    });
    const { truncated: cut, note } = grepResult('content', {}, truncated, search.max, null);
    out.write(`],${JSON.stringify({ truncated: cut, note }).slice(1)}`);
    return out.bytes();
  }

  private grepSearch(scope: ThreadScope, pattern: string, options: GrepOptions): GrepSearch {
    const under = normalizePath(options.path ?? '/');
    const { mode, max } = grepLimits(options);
    const matcher = searchPattern(pattern, options);
    const filter = options.glob ? grepGlobFilter(options.glob, under) : null;
    return { scope, under, matcher, mode, max, filter };
  }

  // Deletes a file, or a directory and everything beneath it (`/`: the whole thread),
  // leaving tombstones for the sync. Returns the deleted file paths, sorted.
  async delete(scope: ThreadScope, path: string): Promise<{ deleted: string[] }> {
    const p = normalizePath(path);
    const deleted = await this.files.remove(scope.tenantId, scope.threadId, p);
    if (deleted.length === 0 && p !== '/') throw VfsError.fileNotFound(p);
    return { deleted };
  }

  // Deletes exactly these files (not directories), ignoring paths that hold no live
  // file, in one transaction and one revision (null when nothing was deleted). For the
  // container sync, which reports each deleted file.
  async deleteMany(scope: ThreadScope, paths: string[]): Promise<{ deleted: string[]; revision: number | null }> {
    const normalized = [...new Set(paths.map((p) => normalizePath(p)))];
    return this.files.removeExact(scope.tenantId, scope.threadId, normalized);
  }

  // The bytes of several files at once (absent paths are left out), sorted by path.
  async readMany(scope: ThreadScope, paths: string[]): Promise<{ info: VfsFileInfo; content: Buffer }[]> {
    const normalized = [...new Set(paths.map((p) => normalizePath(p)))];
    const found = await this.files.readContents(scope.tenantId, scope.threadId, normalized);
    return found.map((f) => ({ info: toInfo(f.file), content: f.content }));
  }

  // A file's info, or a directory entry (implied directories and `/`; size 0,
  // modifiedAt the latest change beneath it, null for an empty thread's root).
  async stat(scope: ThreadScope, path: string): Promise<VfsFileInfo | VfsEntry> {
    const p = normalizePath(path);
    const found = await this.files.stat(scope.tenantId, scope.threadId, p);
    if (!found) throw VfsError.fileNotFound(p);
    if (found.type === 'file') return toInfo(found.file);
    return { path: p, type: 'directory', size: 0, modifiedAt: found.modifiedAt };
  }

  // A file or an implied directory at `path` (`/` always exists).
  async exists(scope: ThreadScope, path: string): Promise<boolean> {
    const p = normalizePath(path);
    return (await this.files.stat(scope.tenantId, scope.threadId, p)) !== null;
  }

  revision(scope: ThreadScope): Promise<number> {
    return this.files.revision(scope.tenantId, scope.threadId);
  }

  // What changed after `revision`, for the container sync: apply `deletes` before
  // `upserts` (a path may turn from file into directory or back). Revision 0, or one
  // the thread has not reached, answers the full listing without deletes.
  async changesSince(
    scope: ThreadScope,
    revision: number,
  ): Promise<{ revision: number; upserts: { path: string; info: VfsFileInfo }[]; deletes: string[] }> {
    const since = wholeNumber(revision, 0, 0);
    const changes = await this.files.changesSince(scope.tenantId, scope.threadId, since);
    return {
      revision: changes.revision,
      upserts: changes.changed.map((f) => ({ path: f.path, info: toInfo(f) })),
      deletes: changes.deleted,
    };
  }

  // --- internals -------------------------------------------------------------------

  private async policy(tenantId: string, overwrite: boolean): Promise<WritePolicy> {
    const tenant = await this.tenants.findById(tenantId);
    return {
      overwrite,
      maxFileBytes: this.config.vfs.maxFileBytes,
      maxTenantBytes: tenant?.limits?.vfsBytes ?? this.config.vfs.maxTenantBytes,
      maxThreadFiles: tenant?.limits?.maxFilesPerThread ?? this.config.vfs.maxFilesPerThread,
    };
  }

  // The error for a path that is not a live file: a directory, or nothing.
  private async missing(scope: ThreadScope, path: string): Promise<VfsError> {
    const found = await this.files.stat(scope.tenantId, scope.threadId, path);
    return found?.type === 'directory' ? VfsError.isADirectory(path) : VfsError.fileNotFound(path);
  }

  private async assertExists(scope: ThreadScope, path: string): Promise<void> {
    if (path !== '/' && !(await this.files.stat(scope.tenantId, scope.threadId, path))) {
      throw VfsError.fileNotFound(path);
    }
  }

  // Every mode keeps GREP_QUERIES_IN_FLIGHT statements running, so PostgreSQL backends
  // share the scanning. Count and content mode list the files under `under` first (then
  // apply the glob filter); files mode needs no list.
  private async grepFilesOrCounts(search: GrepSearch): Promise<GrepResult> {
    const { scope, under, matcher, mode, max, filter } = search;
    const { tenantId, threadId } = scope;
    if (mode === 'files_with_matches') {
      // Split where the store says, without listing every path here.
      const cuts = await this.files.splitPaths(tenantId, threadId, under, GREP_QUERIES_IN_FLIGHT);
      const matched = await this.matchingFiles(scope, under, matcher, rangesBetween(cuts), filter);
      if (matched.length === 0) await this.assertExists(scope, under);
      return grepResult(mode, { files: matched.slice(0, max) }, matched.length > max, max, matched.length);
    }
    // Lines are counted in the first `max` matching files; the others count toward the
    // total only.
    const counts: { path: string; count: number }[] = [];
    const total = await this.readMatching(await this.grepWalk(search), {
      read: (chunk, fileTest) => this.files.countLines(tenantId, threadId, chunk, matcher, { fileTest }),
      filesIn: (counted) => counted.length,
      take: (counted) => {
        counts.push(...counted);
        return counts.length < max;
      },
      total: true,
    });
    return grepResult(mode, { counts: counts.slice(0, max) }, total > max, max, total);
  }

  // Content mode: the matching lines, in path order and as shown (shownLine), handed to
  // `keep` as each statement answers, at most `max` of them. Says whether there were more.
  private async grepLines(search: GrepSearch, keep: (lines: LineMatch[]) => void): Promise<boolean> {
    const { scope, matcher, max } = search;
    const { tenantId, threadId } = scope;
    let offered = 0;
    await this.readMatching(await this.grepWalk(search), {
      // One line more than `max` tells that the answer was cut.
      read: (chunk, fileTest) => this.files.matchLines(tenantId, threadId, chunk, matcher, max + 1 - offered, { fileTest }),
      filesIn: (found) => found.filter((m, i) => i === 0 || m.path !== found[i - 1]!.path).length,
      // The store's matches are shown as they are (a new string only for a line that
      // needs cutting or ends in \r). They come in path order.
      take: (found) => {
        const kept = offered + found.length > max ? found.slice(0, Math.max(0, max - offered)) : found;
        offered += found.length;
        for (const m of kept) m.text = shownLine(m.text);
        keep(kept);
        return offered <= max;
      },
      total: false,
    });
    return offered > max;
  }

  private async grepWalk({ scope, under, matcher, filter }: GrepSearch): Promise<GrepWalk> {
    const listed = await this.files.listPaths(scope.tenantId, scope.threadId, under);
    if (listed.length === 0) await this.assertExists(scope, under);
    return { scope, under, matcher, files: filter ? listed.filter(filter) : listed, filter };
  }

  // Content and count mode. First `read` takes 500 files per statement in path order,
  // its store testing each whole text for the pattern before splitting it into lines,
  // until an answer shows that most of its files matched (FILE_TEST_MAX_SHARE): the next
  // statements split without the test. This goes on while most files match and `take`
  // wants more. Where few files match, the files after that are tested for the pattern
  // in path ranges (no line splitting, fewer statements) and `read` gets the matching
  // ones, while `take` wants more. With `total`, the matching files are counted, and
  // the range test runs even once `take` has enough. Answers are taken in path order; a
  // statement in flight when `take` has enough is left unread, one in flight when few
  // files matched is read first.
  private async readMatching<R>(
    walk: GrepWalk,
    how: { read: (chunk: string[], fileTest: boolean) => Promise<R[]>; filesIn: (rows: R[]) => number; take: (rows: R[]) => boolean; total: boolean },
  ): Promise<number> {
    const { scope, under, matcher, files, filter } = walk;
    let covered = 0;
    let matched = 0;
    let fileTest = true;
    let enough = false;
    await inOrder(
      chunked(files, GREP_FILES_PER_QUERY),
      async (chunk) => ({ size: chunk.length, rows: await how.read(chunk, fileTest) }),
      ({ size, rows }) => {
        covered += size;
        const filesMatched = how.filesIn(rows);
        matched += filesMatched;
        fileTest = filesMatched < size * FILE_TEST_MAX_SHARE;
        enough = !how.take(rows);
        // Few matches: the statements already sent are read, the rest tested in ranges.
        return enough ? false : fileTest ? 'drain' : true;
      },
    );
    if (covered === files.length || (enough && !how.total)) return matched;
    const cuts = evenCuts(files.slice(covered), GREP_QUERIES_IN_FLIGHT);
    const rest = await this.matchingFiles(scope, under, matcher, rangesBetween(cuts, files[covered - 1]), filter);
    if (!enough) await inOrder(chunked(rest, GREP_FILES_PER_QUERY), (chunk) => how.read(chunk, false), how.take);
    return matched + rest.length;
  }

  // The files under `under` in `ranges` that have a matching line, one statement per
  // range, all at once (a statement per 500 files costs more than it saves when nothing
  // is split), then the glob filter.
  private async matchingFiles(
    scope: ThreadScope,
    under: string,
    matcher: LineMatcher,
    ranges: PathRange[],
    filter: ((path: string) => boolean) | null,
  ): Promise<string[]> {
    const found = await Promise.all(ranges.map((range) => this.files.findMatchingFiles(scope.tenantId, scope.threadId, under, matcher, range)));
    const matched = found.flat();
    return filter ? matched.filter(filter) : matched;
  }
}

