import { DrydockError, TenantsService, type TenantLimits } from '@drydock/core';
import type { ExecutionView } from '@drydock/execution';
import { SessionCommandsService, SessionExecutionsService, SessionsService } from '@drydock/sessions';
import type { VfsService } from '@drydock/vfs';
import type {
  Backend,
  BackendContext,
  CommandResult,
  ExecuteOptions,
  ExecuteResult,
  SandboxBackend,
} from '../backends/backend-protocol.js';
import { createThreadStoreBackend } from '../backends/store-backend.js';

// The thread's sandbox as a backend: its files are the thread's VFS files (which the
// worker mirrors into /session); `execute` runs a shell command in the thread's session
// through the same service as POST /v1/sessions/:id/commands, and `executePython` runs
// code through the one behind POST /v1/sessions/:id/executions. The session is the
// thread's live one, created on first use; one instance serves every thread.
//
// A tool call is on the agent's hot path, so the thread's session id and the tenant's
// limits are remembered: a remembered session that has ended (reaped, deleted) is
// found out by the run itself, forgotten, and the call retried on a new one.
// Limits are re-read after LIMITS_TTL_MS, like the auth cache.
const LIMITS_TTL_MS = 1_000;
const MAX_REMEMBERED = 10_000;
const GONE = new Set(['SESSION_NOT_FOUND', 'SESSION_ENDED']);

type Principal = { tenantId: string; limits: TenantLimits };

export class SessionSandboxBackend implements SandboxBackend {
  private readonly files: Backend;
  private readonly sessionOfThread = new Map<string, string>();
  private readonly limitsOfTenant = new Map<string, { limits: TenantLimits; at: number }>();

  constructor(
    vfs: VfsService,
    private readonly sessions: SessionsService,
    private readonly executions: SessionExecutionsService,
    private readonly commands: SessionCommandsService,
    private readonly tenants: TenantsService,
  ) {
    this.files = createThreadStoreBackend(vfs);
  }

  async execute(ctx: BackendContext, command: string, options: ExecuteOptions = {}): Promise<CommandResult> {
    const input = { command, timeoutMs: options.timeoutMs, idempotencyKey: options.idempotencyKey };
    const how = options.signal ? { signal: options.signal } : {};
    return toCommandResult(await this.inThreadSession(ctx, (principal, sessionId) => this.commands.run(principal, sessionId, input, undefined, how)));
  }

  async executePython(ctx: BackendContext, code: string, options: ExecuteOptions = {}): Promise<ExecuteResult> {
    const command = { code, timeoutMs: options.timeoutMs, idempotencyKey: options.idempotencyKey };
    const how = options.signal ? { signal: options.signal } : {};
    return toExecuteResult(
      await this.inThreadSession(ctx, (principal, sessionId) => this.executions.execute(principal, sessionId, command, undefined, how)),
    );
  }

  // Runs in the thread's remembered session, or in its live one (created when there is
  // none) when that one has ended.
  private async inThreadSession(ctx: BackendContext, run: (principal: Principal, sessionId: string) => Promise<ExecutionView>): Promise<ExecutionView> {
    const principal = { tenantId: ctx.tenantId, limits: await this.limitsOf(ctx.tenantId) };
    const key = `${ctx.tenantId}\u0000${ctx.threadId}`;
    const remembered = this.sessionOfThread.get(key);
    if (remembered) {
      try {
        return await run(principal, remembered);
      } catch (error) {
        // By code: a worker-side SESSION_ENDED arrives as the DrydockError it was.
        if (!(error instanceof DrydockError && GONE.has(error.code))) throw error;
        this.sessionOfThread.delete(key);
      }
    }
    // Returns the thread's live session when there is one (as it was started: its tier and
    // idle action too).
    const { session } = await this.sessions.create(ctx.tenantId, {
      threadId: ctx.threadId,
      ...(ctx.template ? { template: ctx.template } : {}),
      ...(ctx.network ? { network: ctx.network } : {}),
      ...(ctx.tier ? { tier: ctx.tier } : {}),
      ...(ctx.idleAction ? { idleAction: ctx.idleAction } : {}),
    });
    this.remember(key, session.id);
    return run(principal, session.id);
  }

  private async limitsOf(tenantId: string): Promise<TenantLimits> {
    const cached = this.limitsOfTenant.get(tenantId);
    if (cached && Date.now() - cached.at < LIMITS_TTL_MS) return cached.limits;
    const { limits } = await this.tenants.get(tenantId);
    if (this.limitsOfTenant.size >= MAX_REMEMBERED) this.limitsOfTenant.clear();
    this.limitsOfTenant.set(tenantId, { limits, at: Date.now() });
    return limits;
  }

  private remember(key: string, sessionId: string): void {
    if (this.sessionOfThread.size >= MAX_REMEMBERED) this.sessionOfThread.delete(this.sessionOfThread.keys().next().value!);
    this.sessionOfThread.set(key, sessionId);
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

export function toCommandResult(view: ExecutionView): CommandResult {
  return {
    status: view.status as CommandResult['status'],
    output: combinedOutput(view.stdout, view.stderr),
    exitCode: view.exitCode ?? null,
    signal: view.signal ?? null,
    truncated: view.truncated,
    durationMs: view.durationMs,
    executionId: view.id,
    files: { changed: view.files.changed, deleted: view.files.deleted },
    artifacts: view.artifacts as CommandResult['artifacts'],
  };
}

// stdout, then stderr on a line of its own.
export function combinedOutput(stdout: string, stderr: string): string {
  if (!stdout || !stderr) return stdout + stderr;
  return stdout.endsWith('\n') ? stdout + stderr : `${stdout}\n${stderr}`;
}
