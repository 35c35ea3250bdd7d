import { ancestorsOf, DEFAULT_REGEX_BUDGET_MS, globFilter, grepTextFiles, isWithin, normalizePath, relativeTo, searchPattern, VfsError } from '@drydock/vfs';
import type {
  Backend,
  BackendContext,
  BackendEntry,
  BackendGrepOptions,
  DeleteResult,
  EditResult,
  GrepResult,
  ReadOptions,
  ReadResult,
  StateFileData,
  StateFiles,
  StateFilesUpdate,
  WriteOptions,
  WriteResult,
} from './backend-protocol.js';
import { readTextWindow, replaceExact } from './backend-read.js';

// Files kept in the graph state (`files`), checkpointed with the conversation and gone
// with it. LangGraph state changes only through what a node returns, so this backend
// never mutates anything: it reads the snapshot the tool was handed
// (`ctx.stateFiles`) and every change comes back as `filesUpdate`, which the tool
// returns in its Command and the graph merges with mergeStateFiles. Two changes made in
// one step therefore do not see each other; the next step sees both.

export const DEFAULT_STATE_MAX_FILE_BYTES = 1024 * 1024;

export interface StateBackendOptions {
  // Every file is serialised into each checkpoint, so keep them small.
  maxFileBytes?: number;
  now?: () => Date;
  regexBudgetMs?: number;
}

// The reducer for the graph's `files` channel: a value adds or replaces, null deletes.
export function mergeStateFiles(left: StateFiles | undefined, right: StateFilesUpdate | undefined): StateFiles {
  const result: StateFiles = { ...(left ?? {}) };
  for (const [path, value] of Object.entries(right ?? {})) {
    if (value === null) delete result[path];
    else result[path] = value;
  }
  return result;
}

export function stateFileText(file: StateFileData): string {
  return Array.isArray(file.content) ? file.content.join('\n') : String(file.content ?? '');
}

function fileSize(file: StateFileData): number {
  return Buffer.byteLength(stateFileText(file), 'utf8');
}

function modifiedAt(file: StateFileData): Date | null {
  const at = new Date(file.modified_at);
  return Number.isNaN(at.getTime()) ? null : at;
}

export class StateBackend implements Backend {
  private readonly maxFileBytes: number;
  private readonly now: () => Date;
  private readonly regexBudgetMs: number;

  constructor(options: StateBackendOptions = {}) {
    this.maxFileBytes = options.maxFileBytes ?? DEFAULT_STATE_MAX_FILE_BYTES;
    this.now = options.now ?? (() => new Date());
    this.regexBudgetMs = options.regexBudgetMs ?? DEFAULT_REGEX_BUDGET_MS;
  }

  async ls(ctx: BackendContext, path: string): Promise<BackendEntry[]> {
    const dir = normalizePath(path);
    const files = this.files(ctx);
    const own = files.get(dir);
    if (own) return [{ path: dir, type: 'file', size: fileSize(own), modifiedAt: modifiedAt(own) }];
    const children = new Map<string, BackendEntry>();
    for (const [p, file] of files) {
      if (p === dir || !isWithin(p, dir)) continue;
      const name = relativeTo(p, dir).split('/')[0];
      const child = dir === '/' ? `/${name}` : `${dir}/${name}`;
      const at = modifiedAt(file);
      if (child === p) {
        children.set(child, { path: child, type: 'file', size: fileSize(file), modifiedAt: at });
        continue;
      }
      const seen = children.get(child);
      const latest = seen?.modifiedAt && at ? (seen.modifiedAt > at ? seen.modifiedAt : at) : (seen?.modifiedAt ?? at);
      children.set(child, { path: child, type: 'directory', size: 0, modifiedAt: latest });
    }
    if (children.size === 0 && dir !== '/') throw VfsError.fileNotFound(dir);
    return [...children.values()].sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  async read(ctx: BackendContext, path: string, options: ReadOptions = {}): Promise<ReadResult> {
    const p = normalizePath(path);
    return readTextWindow(p, stateFileText(this.file(ctx, p)), options);
  }

  async write(ctx: BackendContext, path: string, content: string, options: WriteOptions = {}): Promise<WriteResult> {
    const p = normalizePath(path);
    if (typeof content !== 'string') throw new TypeError('write: content must be a string');
    const files = this.files(ctx);
    const existing = files.get(p);
    if (existing && options.overwrite === false) throw VfsError.fileExists(p);
    if (!existing) this.assertCreatable(files, p);
    const size = this.assertSize(p, content);
    return { path: p, created: !existing, size, filesUpdate: { [p]: this.fileData(content, existing) } };
  }

  async edit(ctx: BackendContext, path: string, oldString: string, newString: string, replaceAll = false): Promise<EditResult> {
    const p = normalizePath(path);
    const existing = this.file(ctx, p);
    const before = stateFileText(existing);
    const { text, occurrences } = replaceExact(p, before, oldString, newString, replaceAll);
    if (text === before) return { path: p, occurrences };
    this.assertSize(p, text);
    return { path: p, occurrences, filesUpdate: { [p]: this.fileData(text, existing) } };
  }

  async delete(ctx: BackendContext, path: string): Promise<DeleteResult> {
    const p = normalizePath(path);
    const deleted = [...this.files(ctx).keys()].filter((k) => isWithin(k, p)).sort();
    if (deleted.length === 0 && p !== '/') throw VfsError.fileNotFound(p);
    return { deleted, filesUpdate: Object.fromEntries(deleted.map((k) => [k, null])) };
  }

  async glob(ctx: BackendContext, pattern: string, path = '/'): Promise<string[]> {
    const base = normalizePath(path);
    const match = globFilter(pattern, base, this.regexBudgetMs);
    const paths = [...this.files(ctx).keys()].filter((k) => isWithin(k, base));
    if (paths.length === 0 && base !== '/') throw VfsError.fileNotFound(base);
    return paths.filter(match).sort();
  }

  async grep(ctx: BackendContext, pattern: string, options: BackendGrepOptions = {}): Promise<GrepResult> {
    const under = normalizePath(options.path ?? '/');
    const matcher = searchPattern(pattern, options);
    const files = [...this.files(ctx)].filter(([k]) => isWithin(k, under)).sort(([a], [b]) => (a < b ? -1 : 1));
    const result = await grepTextFiles(
      files.map(([p, file]) => ({ path: p, text: stateFileText(file) })),
      matcher,
      options,
      under,
      this.regexBudgetMs,
    );
    if (files.length === 0 && under !== '/') throw VfsError.fileNotFound(under);
    return result;
  }

  // --- internals -------------------------------------------------------------------

  // The snapshot by normalised path; keys that are not valid paths are ignored.
  private files(ctx: BackendContext): Map<string, StateFileData> {
    const files = new Map<string, StateFileData>();
    for (const [key, value] of Object.entries(ctx.stateFiles ?? {})) {
      if (!value || typeof value !== 'object') continue;
      try {
        files.set(normalizePath(key), value);
      } catch {
        // not addressable by any tool; leave it alone
      }
    }
    return files;
  }

  private file(ctx: BackendContext, p: string): StateFileData {
    const files = this.files(ctx);
    const found = files.get(p);
    if (found) return found;
    if ([...files.keys()].some((k) => isWithin(k, p))) throw VfsError.isADirectory(p);
    throw VfsError.fileNotFound(p);
  }

  // The same shape rules as the VFS: no file over a directory, no directory over a file.
  private assertCreatable(files: Map<string, StateFileData>, p: string): void {
    if (p === '/' || [...files.keys()].some((k) => k !== p && isWithin(k, p))) throw VfsError.isADirectory(p);
    const blocking = ancestorsOf(p).find((a) => files.has(a));
    if (blocking) throw VfsError.ancestorIsFile(p, blocking);
  }

  private assertSize(p: string, text: string): number {
    const size = Buffer.byteLength(text, 'utf8');
    if (size > this.maxFileBytes) throw VfsError.fileTooLarge(p, size, this.maxFileBytes);
    return size;
  }

  private fileData(text: string, previous: StateFileData | undefined): StateFileData {
    const now = this.now().toISOString();
    return { content: text.split('\n'), created_at: previous?.created_at ?? now, modified_at: now };
  }
}
