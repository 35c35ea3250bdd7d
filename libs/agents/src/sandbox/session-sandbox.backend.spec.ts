import { DrydockError, type TenantsService } from '@drydock/core';
import type { ExecutionView } from '@drydock/execution';
import type { SessionCommandsService, SessionExecutionsService, SessionsService } from '@drydock/sessions';
import { makeVfs } from '../tools/tools.spec-helper.js';
import { combinedOutput, SessionSandboxBackend } from './session-sandbox.backend.js';

function aView(overrides: Partial<ExecutionView> = {}): ExecutionView {
  return {
    id: 'exe_1',
    sessionId: 'ses_1',
    threadId: 'chat-1',
    kind: 'command',
    status: 'ok',
    exitCode: 0,
    signal: null,
    stdout: '',
    stderr: '',
    truncated: false,
    result: null,
    error: null,
    stateLost: false,
    files: { changed: [], deleted: [], skipped: [] },
    artifacts: [],
    artifactsSkipped: [],
    codeSha256: 'x',
    idempotencyKey: null,
    durationMs: 12,
    cpuMs: null,
    createdAt: new Date(0).toISOString(),
    finishedAt: new Date(0).toISOString(),
    ...overrides,
  } as ExecutionView;
}

// The services behind the REST routes, as typed fakes: sessions hands out the thread's
// live session (a new one once `ended` is set), commands and executions answer views.
function makeSut() {
  let live = 'ses_1';
  const ended = new Set<string>();
  const created: string[] = [];
  const templates: (string | undefined)[] = [];
  const commandRuns: { sessionId: string; input: Parameters<SessionCommandsService['run']>[2]; options: unknown }[] = [];
  const pythonRuns: { sessionId: string; code: string }[] = [];
  let commandView = aView();

  const sessions: Pick<SessionsService, 'create'> = {
    create: async (_tenantId, { threadId, template }) => {
      created.push(threadId!);
      templates.push(template);
      return { session: { id: live } as never, created: false };
    },
  };
  const commands: Pick<SessionCommandsService, 'run'> = {
    run: async (_principal, sessionId, input, _onOutput, options) => {
      if (ended.has(sessionId)) throw new DrydockError('SESSION_ENDED', 'the session has ended', 409);
      commandRuns.push({ sessionId, input, options });
      return { ...commandView, sessionId };
    },
  };
  const executions: Pick<SessionExecutionsService, 'execute'> = {
    execute: async (_principal, sessionId, command) => {
      pythonRuns.push({ sessionId, code: command.code });
      return aView({ kind: 'code', sessionId, stdout: '2\n', exitCode: undefined, signal: undefined });
    },
  };
  const tenants: Pick<TenantsService, 'get'> = { get: async (id) => ({ id, limits: {} }) as never };

  const sut = new SessionSandboxBackend(
    makeVfs(),
    sessions as SessionsService,
    executions as SessionExecutionsService,
    commands as SessionCommandsService,
    tenants as TenantsService,
  );
  return {
    sut,
    created,
    templates,
    commandRuns,
    pythonRuns,
    answer: (view: Partial<ExecutionView>) => void (commandView = aView(view)),
    endSession: (next: string) => {
      ended.add(live);
      live = next;
    },
  };
}

const ctx = { tenantId: 'ten_a', threadId: 'chat-1' };

describe(SessionSandboxBackend.name, () => {
  it("should run execute's command as a shell line in the thread's session, answering stdout then stderr and the exit code", async () => {
    const { sut, commandRuns, answer } = makeSut();
    answer({ status: 'error', exitCode: 1, stdout: 'compiling\n', stderr: 'main.c:1: error\n', durationMs: 40, files: { changed: ['/a.o'], deleted: [], skipped: [] } });

    const run = await sut.execute(ctx, 'make', { timeoutMs: 5_000 });

    expect(run).toEqual({
      status: 'error',
      output: 'compiling\nmain.c:1: error\n',
      exitCode: 1,
      signal: null,
      truncated: false,
      durationMs: 40,
      executionId: 'exe_1',
      files: { changed: ['/a.o'], deleted: [] },
      artifacts: [],
    });
    expect(commandRuns).toEqual([{ sessionId: 'ses_1', input: { command: 'make', timeoutMs: 5_000, idempotencyKey: undefined }, options: {} }]);
  });

  it('should run executePython as Python in the same session, never as a command', async () => {
    const { sut, commandRuns, pythonRuns } = makeSut();
    await sut.execute(ctx, 'ls');
    const run = await sut.executePython(ctx, '1 + 1');
    expect(run).toMatchObject({ status: 'ok', stdout: '2\n' });
    expect(pythonRuns).toEqual([{ sessionId: 'ses_1', code: '1 + 1' }]);
    expect(commandRuns).toHaveLength(1);
  });

  it("should forget a session that ended and run the command again in the thread's new one", async () => {
    const { sut, created, commandRuns, endSession } = makeSut();
    await sut.execute(ctx, 'echo one');
    endSession('ses_2');

    const run = await sut.execute(ctx, 'echo two');

    expect(run.status).toBe('ok');
    expect(commandRuns.map((r) => r.sessionId)).toEqual(['ses_1', 'ses_2']);
    expect(created).toEqual(['chat-1', 'chat-1']);
  });

  it("should start the thread's session from the agent's template, and from the platform image without one", async () => {
    const { sut, templates, endSession } = makeSut();
    await sut.executePython({ ...ctx, template: 'analytics:2' }, '1 + 1');
    endSession('ses_2');
    await sut.execute({ tenantId: 'ten_a', threadId: 'chat-2' }, 'ls');
    expect(templates).toEqual(['analytics:2', undefined]);
  });

  it('should pass the abort signal on, so a cancelled run stops the command', async () => {
    const { sut, commandRuns } = makeSut();
    const abort = new AbortController();
    await sut.execute(ctx, 'sleep 5', { signal: abort.signal });
    expect(commandRuns[0]!.options).toEqual({ signal: abort.signal });
  });
});

describe(combinedOutput.name, () => {
  it.each([
    ['out\n', 'err\n', 'out\nerr\n'],
    ['out', 'err', 'out\nerr'],
    ['', 'err\n', 'err\n'],
    ['out\n', '', 'out\n'],
    ['', '', ''],
  ])('should follow stdout %j with stderr %j on a line of its own: %j', (stdout, stderr, expected) => {
    expect(combinedOutput(stdout, stderr)).toBe(expected);
  });
});
