import type { ToolMessage } from '@langchain/core/messages';
import type { StructuredToolInterface } from '@langchain/core/tools';
import type { TenantsRepository } from '@drydock/core';
import { InMemoryThreadFilesRepository, VfsService } from '@drydock/vfs';
import { makeConfig } from '../../../../test/factories/config.factory.js';
import type {
  Backend,
  BackendContext,
  CommandResult,
  ExecuteOptions,
  ExecuteResult,
  SandboxBackend,
  StateFiles,
} from '../backends/backend-protocol.js';
import { createThreadStoreBackend } from '../backends/store-backend.js';
import { CONFIG_TOOL_CALL, type ToolCallContext } from './tool-context.js';
import type { ToolArtifact } from './tool-artifact.js';

// Shared by the tool specs: a real thread VFS in memory, a scripted sandbox over it, and
// an invoke that calls a tool the way the tool node does.

export function makeVfs(): VfsService {
  const tenants: Pick<TenantsRepository, 'findById'> = {
    findById: async (id) => ({ id, name: id, limits: {}, createdAt: new Date(), updatedAt: new Date() }),
  };
  return new VfsService(new InMemoryThreadFilesRepository(), tenants as TenantsRepository, makeConfig());
}

export interface ExecuteCall {
  ctx: BackendContext;
  code: string;
  options?: ExecuteOptions;
}

export interface CommandCall {
  ctx: BackendContext;
  command: string;
  options?: ExecuteOptions;
}

// A sandbox whose files are the thread store and whose runs are scripted: `respond`
// answers each Python run (by default an empty successful run), `respondToCommand` each
// shell command (by default one that printed nothing and exited 0).
export class FakeSandbox implements SandboxBackend {
  readonly calls: ExecuteCall[] = [];
  readonly commands: CommandCall[] = [];
  private readonly files: Backend;

  constructor(
    vfs: VfsService,
    public respond: (call: ExecuteCall) => Promise<ExecuteResult> | ExecuteResult = () => okRun(),
    public respondToCommand: (call: CommandCall) => Promise<CommandResult> | CommandResult = () => okCommand(),
  ) {
    this.files = createThreadStoreBackend(vfs);
  }

  async executePython(ctx: BackendContext, code: string, options?: ExecuteOptions): Promise<ExecuteResult> {
    const call = { ctx, code, options };
    this.calls.push(call);
    return this.respond(call);
  }

  async execute(ctx: BackendContext, command: string, options?: ExecuteOptions): Promise<CommandResult> {
    const call = { ctx, command, options };
    this.commands.push(call);
    return this.respondToCommand(call);
  }

  ls: Backend['ls'] = (ctx, path) => this.files.ls(ctx, path);
  read: Backend['read'] = (ctx, path, options) => this.files.read(ctx, path, options);
  write: Backend['write'] = (ctx, path, content, options) => this.files.write(ctx, path, content, options);
  edit: Backend['edit'] = (ctx, path, o, n, all) => this.files.edit(ctx, path, o, n, all);
  grep: Backend['grep'] = (ctx, pattern, options) => this.files.grep(ctx, pattern, options);
  glob: Backend['glob'] = (ctx, pattern, path) => this.files.glob(ctx, pattern, path);
  delete: Backend['delete'] = (ctx, path) => this.files.delete(ctx, path);
}

export function okRun(overrides: Partial<ExecuteResult> = {}): ExecuteResult {
  return { status: 'ok', stdout: '', stderr: '', truncated: false, result: null, error: null, stateLost: false, ...overrides };
}

export function okCommand(overrides: Partial<CommandResult> = {}): CommandResult {
  return { status: 'ok', output: '', exitCode: 0, signal: null, truncated: false, ...overrides };
}

export interface Harness {
  vfs: VfsService;
  sandbox: FakeSandbox;
  ctx: (overrides?: Partial<ToolCallContext>) => ToolCallContext;
}

// A thread store for files (the default agent's backend) and the fake sandbox over the
// same VFS, so files written by one are seen by the other.
export function makeHarness(): Harness {
  const vfs = makeVfs();
  const sandbox = new FakeSandbox(vfs);
  const ctx = (overrides: Partial<ToolCallContext> = {}): ToolCallContext => ({
    tenantId: 'ten_a',
    threadId: 'chat-1',
    toolCallId: 'call_1',
    backend: sandbox,
    sandbox,
    stateFiles: {} as StateFiles,
    ...overrides,
  });
  return { vfs, sandbox, ctx };
}

export interface ToolOutcome {
  text: string;
  artifact: ToolArtifact;
  message: ToolMessage;
}

export async function invoke(
  sut: StructuredToolInterface,
  args: Record<string, unknown>,
  ctx: ToolCallContext,
  id = ctx.toolCallId,
): Promise<ToolOutcome> {
  const message = (await sut.invoke(
    { id, name: sut.name, args, type: 'tool_call' },
    { configurable: { [CONFIG_TOOL_CALL]: ctx } },
  )) as ToolMessage;
  return { text: message.content as string, artifact: message.artifact as ToolArtifact, message };
}
