import { TenantsService } from '@drydock/core';
import type { ExecutionView } from '@drydock/execution';
import { SessionExecutionsService, SessionsService } from '@drydock/sessions';
import type { VfsService } from '@drydock/vfs';
import type {
  Backend,
  BackendContext,
  ExecuteOptions,
  ExecuteResult,
  SandboxBackend,
} from '../backends/backend-protocol.js';
import { createThreadStoreBackend } from '../backends/store-backend.js';

// The thread's sandbox as a backend: its files are the thread's VFS files (which the
// worker mirrors into /session), and `execute` runs code in the thread's session
// through the same service as POST /v1/sessions/:id/executions. The session is the
// thread's live one, created on first use; one instance serves every thread.
export class SessionSandboxBackend implements SandboxBackend {
  private readonly files: Backend;

  constructor(
    vfs: VfsService,
    private readonly sessions: SessionsService,
    private readonly executions: SessionExecutionsService,
    private readonly tenants: TenantsService,
  ) {
    this.files = createThreadStoreBackend(vfs);
  }

  async execute(ctx: BackendContext, code: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    const tenant = await this.tenants.get(ctx.tenantId);
    // Returns the thread's live session when there is one.
    const { session } = await this.sessions.create(ctx.tenantId, { threadId: ctx.threadId });
    const view = await this.executions.execute({ tenantId: ctx.tenantId, limits: tenant.limits }, session.id, {
      code,
      timeoutMs: options.timeoutMs,
      idempotencyKey: options.idempotencyKey,
    });
    return toExecuteResult(view);
  }

  ls: Backend['ls'] = (ctx, path) => this.files.ls(ctx, path);
  read: Backend['read'] = (ctx, path, options) => this.files.read(ctx, path, options);
  write: Backend['write'] = (ctx, path, content, options) => this.files.write(ctx, path, content, options);
  edit: Backend['edit'] = (ctx, path, oldString, newString, replaceAll) =>
    this.files.edit(ctx, path, oldString, newString, replaceAll);
  grep: Backend['grep'] = (ctx, pattern, options) => this.files.grep(ctx, pattern, options);
  glob: Backend['glob'] = (ctx, pattern, path) => this.files.glob(ctx, pattern, path);
  delete: Backend['delete'] = (ctx, path) => this.files.delete(ctx, path);
}

export function toExecuteResult(view: ExecutionView): ExecuteResult {
  return {
    status: view.status as ExecuteResult['status'],
    stdout: view.stdout,
    stderr: view.stderr,
    truncated: view.truncated,
    result: view.result,
    error: view.error,
    stateLost: view.stateLost,
    executionId: view.id,
    files: { changed: view.files.changed, deleted: view.files.deleted },
    artifacts: view.artifacts as ExecuteResult['artifacts'],
  };
}
