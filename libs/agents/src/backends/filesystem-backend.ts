import { constants, type Stats } from 'node:fs';
import * as fs from 'node:fs/promises';
import { isUtf8 } from 'node:buffer';
import * as hostPath from 'node:path';
import { DrydockError } from '@drydock/core';
import { DEFAULT_REGEX_BUDGET_MS, globFilter, grepTextFiles, normalizePath, searchPattern, VfsError, type TextFile } from '@drydock/vfs';
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
  WriteOptions,
  WriteResult,
} from './backend-protocol.js';
import { readTextWindow, replaceExact } from './backend-read.js';
import { BackendError } from './backend.errors.js';

// A host folder chosen by the operator (never by a tenant), seen by the agent as `/`.
//
// Confinement: a virtual path is normalised by the VFS rules first (`..` may not climb
// above `/`), then resolved on disk with realpath, which follows every symbolic link in
// it; a result outside the root is refused. Files are opened by that resolved path with
// O_NOFOLLOW, so a final component swapped for a link after the check is refused too.
// Node has no openat(), so a directory swapped for a link between the check and the open
// is not covered: the root must not be writable by anyone who is not trusted (the sandbox
// never mounts it).

export const DEFAULT_FS_MAX_FILE_BYTES = 10 * 1024 * 1024;
export const DEFAULT_FS_MAX_FILES = 20_000;
const TENANT_DIR = /^[A-Za-z0-9][A-Za-z0-9_-]{0,127}$/;
const OPEN_READ = constants.O_RDONLY | constants.O_NOFOLLOW | constants.O_NONBLOCK;
const OPEN_WRITE = constants.O_WRONLY | constants.O_CREAT | constants.O_TRUNC | constants.O_NOFOLLOW | constants.O_NONBLOCK;

export interface FilesystemBackendOptions {
  rootDir: string;
  // Each tenant gets `<rootDir>/<tenantId>/` as its `/` (created on first write).
  perTenant?: boolean;
  readOnly?: boolean;
  // Reads (and grep) skip or refuse files larger than this; writes and edits may not
  // produce one.
  maxReadBytes?: number;
  maxWriteBytes?: number;
  // glob, grep and recursive delete stop with TOO_MANY_FILES past this many files.
  maxFiles?: number;
  regexBudgetMs?: number;
}

interface Located {
  root: string;
  path: string;
  host: string;
}

type WriteTarget =
  | { path: string; exists: true; host: string }
  | { path: string; exists: false; dir: string; dirPath: string; missing: string[]; name: string };

function errno(error: unknown): string | undefined {
  return (error as NodeJS.ErrnoException)?.code;
}

function hostWithin(candidate: string, root: string): boolean {
  if (root === hostPath.sep) return true;
  return candidate === root || candidate.startsWith(root + hostPath.sep);
}

// The virtual path of a directory entry; null for names no tool could address (the VFS
// path rules would change or refuse them).
function childPath(dir: string, name: string): string | null {
  const wanted = dir === '/' ? `/${name}` : `${dir}/${name}`;
  try {
    return normalizePath(wanted) === wanted ? wanted : null;
  } catch {
    return null;
  }
}

export class FilesystemBackend implements Backend {
  private readonly rootDir: string;
  private readonly perTenant: boolean;
  private readonly readOnly: boolean;
  private readonly maxReadBytes: number;
  private readonly maxWriteBytes: number;
  private readonly maxFiles: number;
  private readonly regexBudgetMs: number;

  constructor(options: FilesystemBackendOptions) {
    if (!options.rootDir || !hostPath.isAbsolute(options.rootDir)) {
      throw BackendError.invalidConfig(`a filesystem root must be an absolute host path (got ${JSON.stringify(options.rootDir)}).`);
    }
    this.rootDir = options.rootDir;
    this.perTenant = options.perTenant ?? false;
    this.readOnly = options.readOnly ?? false;
    this.maxReadBytes = options.maxReadBytes ?? DEFAULT_FS_MAX_FILE_BYTES;
    this.maxWriteBytes = options.maxWriteBytes ?? DEFAULT_FS_MAX_FILE_BYTES;
    this.maxFiles = options.maxFiles ?? DEFAULT_FS_MAX_FILES;
    this.regexBudgetMs = options.regexBudgetMs ?? DEFAULT_REGEX_BUDGET_MS;
  }

  async ls(ctx: BackendContext, path: string): Promise<BackendEntry[]> {
    const v = normalizePath(path);
    const root = await this.root(ctx, false);
    if (root === null) {
      if (v === '/') return [];
      throw VfsError.fileNotFound(v);
    }
    const { host } = await this.locate(root, v);
    const st = await fs.stat(host);
    if (st.isFile()) return [{ path: v, type: 'file', size: st.size, modifiedAt: st.mtime }];
    if (!st.isDirectory()) throw BackendError.notARegularFile(v);
    const out: BackendEntry[] = [];
    for (const entry of await fs.readdir(host, { withFileTypes: true })) {
      const child = childPath(v, entry.name);
      if (child === null) continue;
      const found = await this.entryStat(root, hostPath.join(host, entry.name));
      if (found?.isFile()) out.push({ path: child, type: 'file', size: found.size, modifiedAt: found.mtime });
      else if (found?.isDirectory()) out.push({ path: child, type: 'directory', size: 0, modifiedAt: found.mtime });
    }
    return out.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
  }

  async read(ctx: BackendContext, path: string, options: ReadOptions = {}): Promise<ReadResult> {
    const v = normalizePath(path);
    const { host } = await this.locate(await this.existingRoot(ctx, v), v);
    const content = await this.readFile(v, host);
    if (!isUtf8(content) || content.includes(0)) {
      return { kind: 'binary', path: v, contentType: 'application/octet-stream', size: content.length };
    }
    return readTextWindow(v, content.toString('utf8'), options);
  }

  async write(ctx: BackendContext, path: string, content: string, options: WriteOptions = {}): Promise<WriteResult> {
    const v = normalizePath(path);
    this.assertWritable(v);
    if (typeof content !== 'string') throw new TypeError('write: content must be a string');
    const bytes = Buffer.from(content, 'utf8');
    if (bytes.length > this.maxWriteBytes) throw VfsError.fileTooLarge(v, bytes.length, this.maxWriteBytes);
    const root = (await this.root(ctx, true)) as string;
    const target = await this.writeTarget(root, v);
    if (target.exists && options.overwrite === false) throw VfsError.fileExists(v);
    let host: string;
    if (target.exists) {
      host = target.host;
    } else {
      const dir = await this.makeDirs(root, v, target);
      host = hostPath.join(dir, target.name);
    }
    const flags = OPEN_WRITE | (options.overwrite === false ? constants.O_EXCL : 0);
    await this.writeFile(v, host, bytes, flags);
    return { path: v, created: !target.exists, size: bytes.length };
  }

  async edit(ctx: BackendContext, path: string, oldString: string, newString: string, replaceAll = false): Promise<EditResult> {
    const v = normalizePath(path);
    this.assertWritable(v);
    const { host } = await this.locate(await this.existingRoot(ctx, v), v);
    const content = await this.readFile(v, host);
    if (!isUtf8(content) || content.includes(0)) throw VfsError.notATextFile(v, 'application/octet-stream');
    const before = content.toString('utf8');
    const { text, occurrences } = replaceExact(v, before, oldString, newString, replaceAll);
    if (text !== before) {
      const bytes = Buffer.from(text, 'utf8');
      if (bytes.length > this.maxWriteBytes) throw VfsError.fileTooLarge(v, bytes.length, this.maxWriteBytes);
      await this.writeFile(v, host, bytes, OPEN_WRITE);
    }
    return { path: v, occurrences };
  }

  async delete(ctx: BackendContext, path: string): Promise<DeleteResult> {
    const v = normalizePath(path);
    this.assertWritable(v);
    if (v === '/') throw VfsError.invalidPath(v, 'the root folder of a host folder cannot be deleted');
    const root = await this.existingRoot(ctx, v);
    // The entry itself, not what a link points to: deleting a link removes the link.
    const parent = await this.locate(root, v.slice(0, v.lastIndexOf('/')) || '/');
    const host = hostPath.join(parent.host, v.slice(v.lastIndexOf('/') + 1));
    let st: Stats;
    try {
      st = await fs.lstat(host);
    } catch (error) {
      if (errno(error) === 'ENOENT') throw VfsError.fileNotFound(v);
      throw error;
    }
    if (!st.isDirectory()) {
      await fs.unlink(host);
      return { deleted: [v] };
    }
    const deleted: string[] = [];
    for await (const file of this.walk(root, v, host)) deleted.push(file.path);
    await fs.rm(host, { recursive: true });
    return { deleted: deleted.sort() };
  }

  async glob(ctx: BackendContext, pattern: string, path = '/'): Promise<string[]> {
    const base = normalizePath(path);
    const match = globFilter(pattern, base, this.regexBudgetMs);
    const root = await this.root(ctx, false);
    if (root === null) {
      if (base === '/') return [];
      throw VfsError.fileNotFound(base);
    }
    const { host } = await this.locate(root, base);
    const found: string[] = [];
    for await (const file of this.walk(root, base, host)) if (match(file.path)) found.push(file.path);
    return found.sort();
  }

  async grep(ctx: BackendContext, pattern: string, options: BackendGrepOptions = {}): Promise<GrepResult> {
    const under = normalizePath(options.path ?? '/');
    const matcher = searchPattern(pattern, options);
    const root = await this.root(ctx, false);
    if (root === null && under !== '/') throw VfsError.fileNotFound(under);
    const start = root === null ? null : (await this.locate(root, under)).host;
    const self = this;
    async function* texts(): AsyncGenerator<TextFile> {
      if (root === null || start === null) return;
      const files: { path: string; host: string; size: number }[] = [];
      for await (const file of self.walk(root, under, start)) files.push(file);
      files.sort((a, b) => (a.path < b.path ? -1 : 1));
      for (const file of files) {
        // Too large or binary: not searched, like grep -I.
        if (file.size > self.maxReadBytes) continue;
        let content: Buffer;
        try {
          content = await self.readFile(file.path, file.host);
        } catch {
          continue;
        }
        if (!isUtf8(content) || content.includes(0)) continue;
        yield { path: file.path, text: content.toString('utf8') };
      }
    }
    return grepTextFiles(texts(), matcher, options, under, this.regexBudgetMs);
  }

  // --- confinement -----------------------------------------------------------------

  // The real path of this caller's root; null when a per-tenant folder does not exist
  // yet and `create` is false.
  private async root(ctx: BackendContext, create: boolean): Promise<string | null> {
    const base = await fs.realpath(this.rootDir);
    if (!this.perTenant) return base;
    if (typeof ctx.tenantId !== 'string' || !TENANT_DIR.test(ctx.tenantId)) {
      throw new DrydockError('TENANT_REQUIRED', 'A valid tenant scope is required for this operation.', 500);
    }
    const dir = hostPath.join(base, ctx.tenantId);
    if (create && !this.readOnly) {
      try {
        await fs.mkdir(dir);
      } catch (error) {
        if (errno(error) !== 'EEXIST') throw error;
      }
    }
    let st: Stats;
    try {
      st = await fs.lstat(dir);
    } catch (error) {
      if (errno(error) === 'ENOENT') return null;
      throw error;
    }
    // The tenant folder itself must be a real directory, not a link to somewhere else.
    if (st.isSymbolicLink() || !st.isDirectory()) throw BackendError.outsideRoot('/');
    return dir;
  }

  private async existingRoot(ctx: BackendContext, v: string): Promise<string> {
    const root = await this.root(ctx, false);
    if (root === null) throw VfsError.fileNotFound(v);
    return root;
  }

  // An existing file or directory, every link followed, checked to be inside the root.
  private async locate(root: string, v: string): Promise<Located> {
    const candidate = v === '/' ? root : hostPath.join(root, ...v.slice(1).split('/'));
    let real: string;
    try {
      real = await fs.realpath(candidate);
    } catch (error) {
      const code = errno(error);
      if (code === 'ENOENT' || code === 'ENOTDIR') throw VfsError.fileNotFound(v);
      if (code === 'ELOOP') throw BackendError.outsideRoot(v);
      throw error;
    }
    if (!hostWithin(real, root)) throw BackendError.outsideRoot(v);
    return { root, path: v, host: real };
  }

  // Where a write lands: the existing file (links followed, checked), or the deepest
  // existing real directory plus the directories still to create.
  private async writeTarget(root: string, v: string): Promise<WriteTarget> {
    if (v === '/') throw VfsError.isADirectory(v);
    const names = v.slice(1).split('/');
    let dir = root;
    for (let i = 0; i < names.length; i++) {
      const last = i === names.length - 1;
      const next = hostPath.join(dir, names[i]);
      let st: Stats;
      try {
        st = await fs.lstat(next);
      } catch (error) {
        const code = errno(error);
        if (code === 'ENOENT') {
          const dirPath = `/${names.slice(0, i).join('/')}`;
          return { path: v, exists: false, dir, dirPath, missing: names.slice(i, -1), name: names[names.length - 1] };
        }
        throw error;
      }
      let real = next;
      if (st.isSymbolicLink()) {
        try {
          real = await fs.realpath(next);
        } catch {
          // A dangling or looping link: writing through it would create its target.
          throw BackendError.outsideRoot(v);
        }
        if (!hostWithin(real, root)) throw BackendError.outsideRoot(v);
        st = await fs.stat(real);
      }
      const virtual = `/${names.slice(0, i + 1).join('/')}`;
      if (last) {
        if (st.isDirectory()) throw VfsError.isADirectory(v);
        if (!st.isFile()) throw BackendError.notARegularFile(v);
        return { path: v, exists: true, host: real };
      }
      if (!st.isDirectory()) throw VfsError.ancestorIsFile(v, virtual);
      dir = real;
    }
    throw VfsError.isADirectory(v);
  }

  // Creates the missing directories one by one beneath a checked real directory; a name
  // that appears meanwhile is only accepted as a real directory.
  private async makeDirs(
    root: string,
    v: string,
    target: { dir: string; dirPath: string; missing: string[] },
  ): Promise<string> {
    let current = target.dir;
    let virtual = target.dirPath;
    for (const name of target.missing) {
      const next = hostPath.join(current, name);
      virtual = virtual === '/' ? `/${name}` : `${virtual}/${name}`;
      try {
        await fs.mkdir(next);
      } catch (error) {
        if (errno(error) !== 'EEXIST') throw error;
        const st = await fs.lstat(next);
        if (!st.isDirectory()) throw st.isSymbolicLink() ? BackendError.outsideRoot(v) : VfsError.ancestorIsFile(v, virtual);
      }
      current = next;
    }
    if (!hostWithin(current, root)) throw BackendError.outsideRoot(v);
    return current;
  }

  private assertWritable(v: string): void {
    if (this.readOnly) throw BackendError.readOnly(v);
  }

  // --- file I/O --------------------------------------------------------------------

  private async readFile(v: string, host: string): Promise<Buffer> {
    const handle = await this.open(v, host, OPEN_READ);
    try {
      const st = await handle.stat();
      if (st.isDirectory()) throw VfsError.isADirectory(v);
      if (!st.isFile()) throw BackendError.notARegularFile(v);
      if (st.size > this.maxReadBytes) throw BackendError.tooLargeToRead(v, st.size, this.maxReadBytes);
      // Read at most one byte past the cap: a file growing meanwhile is still refused.
      const buffer = Buffer.alloc(Math.min(st.size, this.maxReadBytes) + 1);
      let length = 0;
      while (length < buffer.length) {
        const { bytesRead } = await handle.read(buffer, length, buffer.length - length, length);
        if (bytesRead === 0) break;
        length += bytesRead;
      }
      if (length > this.maxReadBytes) throw BackendError.tooLargeToRead(v, length, this.maxReadBytes);
      return buffer.subarray(0, length);
    } finally {
      await handle.close();
    }
  }

  private async writeFile(v: string, host: string, bytes: Buffer, flags: number): Promise<void> {
    const handle = await this.open(v, host, flags);
    try {
      const st = await handle.stat();
      if (!st.isFile()) throw BackendError.notARegularFile(v);
      await handle.writeFile(bytes);
    } finally {
      await handle.close();
    }
  }

  private async open(v: string, host: string, flags: number): Promise<fs.FileHandle> {
    try {
      return await fs.open(host, flags, 0o644);
    } catch (error) {
      const code = errno(error);
      if (code === 'ELOOP') throw BackendError.outsideRoot(v);
      if (code === 'EEXIST') throw VfsError.fileExists(v);
      if (code === 'ENOENT') throw VfsError.fileNotFound(v);
      if (code === 'EISDIR') throw VfsError.isADirectory(v);
      if (code === 'ENXIO') throw BackendError.notARegularFile(v);
      throw error;
    }
  }

  // lstat, or for a link the stat of its target when that lies inside the root; null
  // for links leading outside, dangling links and entries that vanished.
  private async entryStat(root: string, host: string): Promise<Stats | null> {
    try {
      const st = await fs.lstat(host);
      if (!st.isSymbolicLink()) return st;
      const real = await fs.realpath(host);
      return hostWithin(real, root) ? await fs.stat(real) : null;
    } catch {
      return null;
    }
  }

  // Regular files at or beneath a located path, depth first. Links to files inside the
  // root are included; linked directories are not descended (no cycles, no double
  // counting).
  private async *walk(
    root: string,
    v: string,
    host: string,
  ): AsyncGenerator<{ path: string; host: string; size: number }> {
    let count = 0;
    const st = await fs.stat(host);
    if (st.isFile()) {
      yield { path: v, host, size: st.size };
      return;
    }
    const stack: { path: string; host: string }[] = [{ path: v, host }];
    while (stack.length > 0) {
      const dir = stack.pop()!;
      let entries;
      try {
        entries = await fs.readdir(dir.host, { withFileTypes: true });
      } catch {
        continue;
      }
      for (const entry of entries) {
        const child = childPath(dir.path, entry.name);
        if (child === null) continue;
        const entryHost = hostPath.join(dir.host, entry.name);
        if (entry.isDirectory()) {
          stack.push({ path: child, host: entryHost });
          continue;
        }
        if (!entry.isFile() && !entry.isSymbolicLink()) continue;
        const found = await this.entryStat(root, entryHost);
        if (!found?.isFile()) continue;
        if (++count > this.maxFiles) throw BackendError.tooManyFiles(v, this.maxFiles);
        const real = entry.isSymbolicLink() ? await fs.realpath(entryHost) : entryHost;
        yield { path: child, host: real, size: found.size };
      }
    }
  }
}
