import { DrydockError } from '@drydock/core';
import { globFilter, grepGlobFilter, grepLimits, grepResult, isWithin, normalizePath, relativeTo } from '@drydock/vfs';
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
  StateFiles,
  StateFilesUpdate,
  WriteOptions,
  WriteResult,
} from './backend-protocol.js';
import { BackendError } from './backend.errors.js';

export interface BackendRoute {
  // Starts and ends with `/`, e.g. `/memories/`.
  prefix: string;
  backend: Backend;
}

interface Mount {
  prefix: string;
  // The prefix without its trailing slash: `/memories`.
  dir: string;
  backend: Backend;
}

interface Target {
  mount: Mount | null;
  backend: Backend;
  // The path as the chosen backend sees it (the mount's directory becomes `/`).
  inner: string;
}

const byPath = (a: string, b: string) => (a < b ? -1 : a > b ? 1 : 0);

// Prefixes accepted for a mount: absolute, normalised, ending with `/`, not `/` itself.
export function assertRoutePrefix(prefix: string): string {
  if (typeof prefix !== 'string' || !prefix.startsWith('/') || !prefix.endsWith('/') || prefix === '/') {
    throw BackendError.invalidConfig(`a route prefix must start and end with "/" and name a folder (got ${JSON.stringify(prefix)}).`);
  }
  const dir = prefix.slice(0, -1);
  let normal: string;
  try {
    normal = normalizePath(dir);
  } catch {
    normal = '';
  }
  if (normal !== dir || dir === '/') throw BackendError.invalidConfig(`the route prefix ${JSON.stringify(prefix)} is not a normalised path.`);
  return dir;
}

// Routes each path to the backend mounted at its longest matching prefix (`/memories/`
// → the tenant-wide store) and everything else to the default backend. A routed backend
// sees paths with the prefix removed (`/memories/a.md` → `/a.md`); every path coming
// back (entries, grep and glob results, deleted paths, state updates) gets it back.
// Files a backend holds beneath a deeper mount are hidden by that mount, and listing,
// glob and grep above a mount include the mount's files.
export class CompositeBackend implements Backend {
  private readonly mounts: Mount[];

  constructor(
    private readonly defaultBackend: Backend,
    routes: BackendRoute[] | Record<string, Backend>,
  ) {
    const list = Array.isArray(routes)
      ? routes
      : Object.entries(routes).map(([prefix, backend]) => ({ prefix, backend }));
    const seen = new Set<string>();
    this.mounts = list.map(({ prefix, backend }) => {
      const dir = assertRoutePrefix(prefix);
      if (seen.has(dir)) throw BackendError.invalidConfig(`the route prefix ${prefix} appears twice.`);
      seen.add(dir);
      return { prefix, dir, backend };
    });
    // Longest first, so the first match is the longest prefix.
    this.mounts.sort((a, b) => b.dir.length - a.dir.length);
  }

  async ls(ctx: BackendContext, path: string): Promise<BackendEntry[]> {
    const target = this.route(path);
    const dir = outer(target.mount, target.inner);
    const below = this.mountsBelow(dir);
    const entries = await this.orEmptyIfMountsBelow(below, () =>
      this.via(target, () => target.backend.ls(this.contextFor(ctx, target.mount), target.inner)),
    );
    const byName = new Map<string, BackendEntry>();
    for (const e of entries) {
      const full = outer(target.mount, e.path);
      if (!this.shadowed(full, target.mount)) byName.set(full, { ...e, path: full });
    }
    // Mount points show as directories in their parent's listing.
    for (const mount of below) {
      const name = relativeTo(mount.dir, dir).split('/')[0];
      const child = dir === '/' ? `/${name}` : `${dir}/${name}`;
      byName.set(child, { path: child, type: 'directory', size: 0, modifiedAt: null });
    }
    return [...byName.values()].sort((a, b) => byPath(a.path, b.path));
  }

  async read(ctx: BackendContext, path: string, options?: ReadOptions): Promise<ReadResult> {
    const target = this.route(path);
    const result = await this.via(target, () =>
      target.backend.read(this.contextFor(ctx, target.mount), target.inner, options),
    );
    return { ...result, path: outer(target.mount, result.path) };
  }

  async write(ctx: BackendContext, path: string, content: string, options?: WriteOptions): Promise<WriteResult> {
    const target = this.route(path);
    const result = await this.via(target, () =>
      target.backend.write(this.contextFor(ctx, target.mount), target.inner, content, options),
    );
    return {
      ...result,
      path: outer(target.mount, result.path),
      ...(result.filesUpdate ? { filesUpdate: outerUpdate(target.mount, result.filesUpdate) } : {}),
    };
  }

  async edit(ctx: BackendContext, path: string, oldString: string, newString: string, replaceAll?: boolean): Promise<EditResult> {
    const target = this.route(path);
    const result = await this.via(target, () =>
      target.backend.edit(this.contextFor(ctx, target.mount), target.inner, oldString, newString, replaceAll),
    );
    return {
      ...result,
      path: outer(target.mount, result.path),
      ...(result.filesUpdate ? { filesUpdate: outerUpdate(target.mount, result.filesUpdate) } : {}),
    };
  }

  // Deleting a folder above a mount deletes the default backend's files only; a mount's
  // files are deleted through paths beneath it.
  async delete(ctx: BackendContext, path: string): Promise<DeleteResult> {
    const target = this.route(path);
    const result = await this.via(target, () => target.backend.delete(this.contextFor(ctx, target.mount), target.inner));
    return {
      deleted: result.deleted.map((p) => outer(target.mount, p)),
      ...(result.filesUpdate ? { filesUpdate: outerUpdate(target.mount, result.filesUpdate) } : {}),
    };
  }

  async glob(ctx: BackendContext, pattern: string, path = '/'): Promise<string[]> {
    const target = this.route(path);
    const base = outer(target.mount, target.inner);
    const match = globFilter(pattern, base);
    const absolute = pattern.replace(/^(\.\/)+/, '').startsWith('/');
    const below = this.mountsBelow(base);
    // A relative pattern means the same beneath a mount's root as beneath the outer
    // path; an absolute one names outer paths, so it is matched here.
    const own = await this.orEmptyIfMountsBelow(below, () =>
      this.via(target, () =>
        target.backend.glob(this.contextFor(ctx, target.mount), absolute && target.mount ? '**' : pattern, target.inner),
      ),
    );
    const found = own.map((p) => outer(target.mount, p)).filter((p) => !this.shadowed(p, target.mount) && match(p));
    for (const mount of below) {
      const all = await this.via({ mount, backend: mount.backend, inner: '/' }, () =>
        mount.backend.glob(this.contextFor(ctx, mount), '**', '/'),
      );
      for (const p of all) {
        const full = outer(mount, p);
        if (!this.shadowed(full, mount) && match(full)) found.push(full);
      }
    }
    return [...new Set(found)].sort(byPath);
  }

  async grep(ctx: BackendContext, pattern: string, options: BackendGrepOptions = {}): Promise<GrepResult> {
    const { mode, max } = grepLimits(options);
    const target = this.route(options.path ?? '/');
    const under = outer(target.mount, target.inner);
    const below = this.mountsBelow(under);
    const parts = await this.orEmptyIfMountsBelow(below, async () => [
      await this.grepIn(ctx, target, pattern, options, under),
    ]);
    for (const mount of below) {
      parts.push(await this.grepIn(ctx, { mount, backend: mount.backend, inner: '/' }, pattern, options, under));
    }
    return parts.length === 1 ? parts[0] : mergeGrep(mode, max, parts);
  }

  // --- internals -------------------------------------------------------------------

  // Errors from a mounted backend name its inner paths; the model must see the paths it
  // used, so those are put back under the mount.
  private async via<T>(target: Target, run: () => Promise<T>): Promise<T> {
    try {
      return await run();
    } catch (error) {
      throw target.mount ? outerError(error, target.mount, target.inner) : error;
    }
  }

  private route(path: string): Target {
    const p = normalizePath(path);
    for (const mount of this.mounts) {
      if (isWithin(p, mount.dir)) {
        return { mount, backend: mount.backend, inner: p === mount.dir ? '/' : p.slice(mount.dir.length) };
      }
    }
    return { mount: null, backend: this.defaultBackend, inner: p };
  }

  // Mounts strictly beneath an outer directory (their files are not in its owner).
  private mountsBelow(dir: string): Mount[] {
    return this.mounts.filter((m) => m.dir !== dir && isWithin(m.dir, dir));
  }

  // True when an outer path a backend reported belongs to another (deeper) mount.
  private shadowed(path: string, owner: Mount | null): boolean {
    return this.mounts.find((m) => isWithin(path, m.dir)) !== (owner ?? undefined);
  }

  // A directory that exists only as the parent of a mount is empty in its own backend.
  private async orEmptyIfMountsBelow<T>(below: Mount[], run: () => Promise<T[]>): Promise<T[]> {
    try {
      return await run();
    } catch (error) {
      if (below.length > 0 && error instanceof DrydockError && error.code === 'FILE_NOT_FOUND') return [];
      throw error;
    }
  }

  // grep in one backend, paths mapped back to outer paths. `under` is the outer search
  // path, which a `glob` containing `/` is relative to (absolute with a leading `/`);
  // when the backend's own root differs, that filter is applied here, to outer paths.
  private async grepIn(
    ctx: BackendContext,
    target: Target,
    pattern: string,
    options: BackendGrepOptions,
    under: string,
  ): Promise<GrepResult> {
    const glob = options.glob;
    const passGlob =
      glob === undefined ||
      !glob.includes('/') ||
      (glob.startsWith('/') ? target.mount === null : outer(target.mount, target.inner) === under);
    const result = await this.via(target, () =>
      target.backend.grep(this.contextFor(ctx, target.mount), pattern, {
        ...options,
        path: target.inner,
        glob: passGlob ? glob : undefined,
      }),
    );
    const mapped = mapPaths(result, (p) => outer(target.mount, p));
    const keep = passGlob ? () => true : grepGlobFilter(glob, under);
    return withoutPaths(mapped, (p) => this.shadowed(p, target.mount) || !keep(p));
  }

  // The context a backend sees: the state files it owns (longest prefix), with its
  // prefix removed.
  private contextFor(ctx: BackendContext, mount: Mount | null): BackendContext {
    if (!ctx.stateFiles) return ctx;
    const files: StateFiles = {};
    for (const [key, value] of Object.entries(ctx.stateFiles)) {
      let p: string;
      try {
        p = normalizePath(key);
      } catch {
        continue;
      }
      if (p === mount?.dir || this.route(p).mount !== mount) continue;
      files[mount ? p.slice(mount.dir.length) : p] = value;
    }
    return { ...ctx, stateFiles: files };
  }
}

function outer(mount: Mount | null, inner: string): string {
  if (!mount) return inner;
  return inner === '/' ? mount.dir : `${mount.dir}${inner}`;
}

function escapeRegExp(text: string): string {
  return text.replace(/[.*+?^${}()|[\]\\]/g, '\\$&');
}

function outerError(error: unknown, mount: Mount, inner: string): unknown {
  if (!(error instanceof DrydockError)) return error;
  const paths = new Set([inner]);
  const ancestor = error.details?.ancestor;
  if (typeof ancestor === 'string' && ancestor.startsWith('/')) paths.add(ancestor);
  let message = error.message;
  // Longest first, so `/a/b` is rewritten before `/a` could match inside it.
  for (const p of [...paths].sort((a, b) => b.length - a.length)) {
    const token = new RegExp(`(^|[\\s"(])${escapeRegExp(p)}(?=$|[\\s"):;,]|\\.(?:\\s|$))`, 'g');
    message = message.replace(token, (_m, lead: string) => `${lead}${outer(mount, p)}`);
  }
  const details =
    typeof ancestor === 'string' && ancestor.startsWith('/')
      ? { ...error.details, ancestor: outer(mount, ancestor) }
      : error.details;
  const Ctor = error.constructor as new (code: string, message: string, status: number, details?: Record<string, unknown>) => DrydockError;
  const mapped = new Ctor(error.code, message, error.status, details);
  mapped.stack = error.stack;
  return mapped;
}

function outerUpdate(mount: Mount | null, update: StateFilesUpdate): StateFilesUpdate {
  if (!mount) return update;
  return Object.fromEntries(Object.entries(update).map(([p, v]) => [outer(mount, p), v]));
}

function mapPaths(result: GrepResult, map: (p: string) => string): GrepResult {
  return {
    ...result,
    ...(result.files ? { files: result.files.map(map) } : {}),
    ...(result.matches ? { matches: result.matches.map((m) => ({ ...m, path: map(m.path) })) } : {}),
    ...(result.counts ? { counts: result.counts.map((c) => ({ ...c, path: map(c.path) })) } : {}),
  };
}

function withoutPaths(result: GrepResult, drop: (p: string) => boolean): GrepResult {
  return {
    ...result,
    ...(result.files ? { files: result.files.filter((p) => !drop(p)) } : {}),
    ...(result.matches ? { matches: result.matches.filter((m) => !drop(m.path)) } : {}),
    ...(result.counts ? { counts: result.counts.filter((c) => !drop(c.path)) } : {}),
  };
}

function mergeGrep(mode: GrepResult['mode'], max: number, parts: GrepResult[]): GrepResult {
  let truncated = parts.some((r) => r.truncated);
  if (mode === 'content') {
    const matches = parts
      .flatMap((r) => r.matches ?? [])
      .sort((a, b) => byPath(a.path, b.path) || a.line - b.line);
    if (matches.length > max) truncated = true;
    return grepResult(mode, { matches: matches.slice(0, max) }, truncated, max);
  }
  if (mode === 'count') {
    const counts = parts.flatMap((r) => r.counts ?? []).sort((a, b) => byPath(a.path, b.path));
    if (counts.length > max) truncated = true;
    return grepResult(mode, { counts: counts.slice(0, max) }, truncated, max);
  }
  const files = parts.flatMap((r) => r.files ?? []).sort(byPath);
  if (files.length > max) truncated = true;
  return grepResult(mode, { files: files.slice(0, max) }, truncated, max);
}
