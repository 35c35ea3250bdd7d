import { DrydockError, THREAD_ID_PATTERN, THREAD_ID_RULE } from '@drydock/core';
import type { ThreadScope, VfsService } from '@drydock/vfs';
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
import { readTextWindow } from './backend-read.js';

// The pseudo thread under which a tenant's tenant-wide files (`/memories/`) live in the
// VFS. Client thread ids must match THREAD_ID_PATTERN, which requires a letter or digit
// first, so no client thread (REST pipe, session DTO, the agent's thread store below)
// can ever name an id starting with `_`: the namespace cannot collide with, or be
// reached as, a real thread. The files count against the tenant's quota like any other.
export const TENANT_STORE_NAMESPACE = '__tenant__';
const NAMESPACE_PATTERN = /^__[A-Za-z0-9_.:-]{1,126}$/;

export function assertTenantNamespace(namespace: string): void {
  if (typeof namespace !== 'string' || !NAMESPACE_PATTERN.test(namespace) || THREAD_ID_PATTERN.test(namespace)) {
    throw new DrydockError(
      'INVALID_BACKEND_CONFIG',
      `A tenant-wide namespace must start with "__" (so that no client thread id can equal it); got ${JSON.stringify(namespace)}.`,
      500,
    );
  }
}

// The scope of the conversation's own files. The thread id is checked again here so that
// an unvalidated id reaching the agent cannot address a tenant-wide namespace.
export function threadStoreScope(ctx: BackendContext): ThreadScope {
  if (typeof ctx.threadId !== 'string' || !THREAD_ID_PATTERN.test(ctx.threadId)) {
    throw new DrydockError('INVALID_THREAD_ID', `A thread id must be ${THREAD_ID_RULE}.`, 400);
  }
  return { tenantId: ctx.tenantId, threadId: ctx.threadId };
}

export function tenantStoreScope(tenantId: string, namespace = TENANT_STORE_NAMESPACE): ThreadScope {
  return { tenantId, threadId: namespace };
}

// A backend over the PostgreSQL VFS. Which VFS thread a call lands in is decided by
// `scopeOf`: the calling thread (createThreadStoreBackend) or one fixed namespace per
// tenant (createTenantStoreBackend), shared by all of that tenant's threads and by no
// other tenant.
export class StoreBackend implements Backend {
  constructor(
    private readonly vfs: VfsService,
    private readonly scopeOf: (ctx: BackendContext) => ThreadScope,
  ) {}

  async ls(ctx: BackendContext, path: string): Promise<BackendEntry[]> {
    return this.vfs.ls(this.scopeOf(ctx), path);
  }

  async read(ctx: BackendContext, path: string, options: ReadOptions = {}): Promise<ReadResult> {
    const { info, content } = await this.vfs.readContent(this.scopeOf(ctx), path);
    if (!info.text) return { kind: 'binary', path: info.path, contentType: info.contentType, size: info.size };
    return readTextWindow(info.path, content.toString('utf8'), options);
  }

  async write(ctx: BackendContext, path: string, content: string, options: WriteOptions = {}): Promise<WriteResult> {
    const { info, created } = await this.vfs.write(this.scopeOf(ctx), path, content, { overwrite: options.overwrite ?? true });
    return { path: info.path, created, size: info.size };
  }

  async edit(ctx: BackendContext, path: string, oldString: string, newString: string, replaceAll = false): Promise<EditResult> {
    return this.vfs.edit(this.scopeOf(ctx), path, oldString, newString, replaceAll);
  }

  async grep(ctx: BackendContext, pattern: string, options: BackendGrepOptions = {}): Promise<GrepResult> {
    return this.vfs.grep(this.scopeOf(ctx), pattern, options);
  }

  async glob(ctx: BackendContext, pattern: string, path = '/'): Promise<string[]> {
    return this.vfs.glob(this.scopeOf(ctx), pattern, path);
  }

  async delete(ctx: BackendContext, path: string): Promise<DeleteResult> {
    return this.vfs.delete(this.scopeOf(ctx), path);
  }
}

export function createThreadStoreBackend(vfs: VfsService): StoreBackend {
  return new StoreBackend(vfs, threadStoreScope);
}

export function createTenantStoreBackend(vfs: VfsService, namespace = TENANT_STORE_NAMESPACE): StoreBackend {
  assertTenantNamespace(namespace);
  return new StoreBackend(vfs, (ctx) => tenantStoreScope(ctx.tenantId, namespace));
}
