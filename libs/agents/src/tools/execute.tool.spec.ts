import { BackendEvictionStore } from '../eviction/backend-eviction-store.js';
import { ToolResultEvictor } from '../eviction/tool-result-eviction.js';
import { backendContextOf } from './backend-scope.js';
import { createExecuteTool } from './execute.tool.js';
import { COMMAND_TRUNCATED_TEXT } from './render-command.js';
import { CONFIG_TOOL_CALL } from './tool-context.js';
import { EXECUTE_TOOL_NAME } from './tools.constants.js';
import { invoke, makeHarness, okCommand } from './tools.spec-helper.js';

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('execute tool', () => {
  it('should run the shell command in the calling thread and answer its output, then its exit code', async () => {
    const { sandbox, ctx } = makeHarness();
    sandbox.respondToCommand = () => okCommand({ output: 'a.txt\nb.txt\n', executionId: 'exe_1' });
    const sut = createExecuteTool();

    const out = await invoke(sut, { command: 'ls' }, ctx());

    expect(out.text).toBe('a.txt\nb.txt\n\nExit code: 0');
    expect(out.artifact).toEqual({ execution: { id: 'exe_1', status: 'ok' } });
    expect(out.message.status).not.toBe('error');
    expect(sandbox.commands).toEqual([{ ctx: { tenantId: 'ten_a', threadId: 'chat-1', stateFiles: {} }, command: 'ls', options: {} }]);
    expect(sandbox.calls).toHaveLength(0);
  });

  it('should answer a non-zero exit with its output and code as an error the model can read', async () => {
    const { sandbox, ctx } = makeHarness();
    sandbox.respondToCommand = () =>
      okCommand({ status: 'error', output: "ls: cannot access '/nope': No such file or directory\n", exitCode: 2 });

    const out = await invoke(createExecuteTool(), { command: 'ls /nope' }, ctx());

    expect(out.text).toBe("ls: cannot access '/nope': No such file or directory\n\nExit code: 2");
    expect(out.artifact).toEqual({ isError: true, execution: { status: 'error' } });
  });

  it('should say so when the command wrote nothing', async () => {
    const { ctx } = makeHarness();
    const out = await invoke(createExecuteTool(), { command: 'true' }, ctx());
    expect(out.text).toBe('(no output)\n\nExit code: 0');
  });

  it('should say the output was truncated, and how to see all of it', async () => {
    const { sandbox, ctx } = makeHarness();
    sandbox.respondToCommand = () => okCommand({ output: 'line 1\nline 2\n', truncated: true });

    const out = await invoke(createExecuteTool(), { command: 'yes line' }, ctx());

    expect(out.text).toBe(`line 1\nline 2\n\n${COMMAND_TRUNCATED_TEXT}\n\nExit code: 0`);
    expect(COMMAND_TRUNCATED_TEXT).toMatch(/^\[output truncated\] .*read_file/);
  });

  it('should say the command timed out, after how long, and that it has no exit code', async () => {
    const { sandbox, ctx } = makeHarness();
    sandbox.respondToCommand = () => okCommand({ status: 'timeout', output: 'step 1\n', exitCode: null, signal: 'SIGKILL', durationMs: 2_004 });

    const out = await invoke(createExecuteTool(), { command: 'sleep 60' }, ctx());

    expect(out.text).toBe(
      'step 1\n\nTimed out after 2.0 s: the command ran past its time limit and was stopped, with every process it started; ' +
        'its output up to then is above. Make it faster, work on less data, or split it into shorter commands.\n\nExit code: none (timed out)',
    );
    expect(out.artifact).toEqual({ isError: true, execution: { status: 'timeout' } });
  });

  it('should name the signal that ended the command, and say when it ran out of memory', async () => {
    const { sandbox, ctx } = makeHarness();
    sandbox.respondToCommand = () => okCommand({ status: 'error', output: '', exitCode: null, signal: 'SIGSEGV' });
    expect((await invoke(createExecuteTool(), { command: './crash' }, ctx())).text).toBe('(no output)\n\nExit code: none (killed by signal SIGSEGV)');

    sandbox.respondToCommand = () => okCommand({ status: 'memory', exitCode: null, signal: 'SIGKILL' });
    const oom = await invoke(createExecuteTool(), { command: 'python3 -c "x = b\'x\' * 10**12"' }, ctx());
    expect(oom.text).toMatch(/^\(no output\)\n\nOut of memory: the sandbox ran out of memory and the command was killed\. .*\n\nExit code: none \(out of memory\)$/);
    expect(oom.artifact.isError).toBe(true);
  });

  it('should list the files the command changed and the artifacts it left, after the exit code', async () => {
    const { sandbox, ctx } = makeHarness();
    sandbox.respondToCommand = () =>
      okCommand({
        output: 'done\n',
        files: { changed: ['/out/report.csv'], deleted: ['/tmp.txt'] },
        artifacts: [{ id: 'art_1', path: '/artifacts/plot.png', mime: 'image/png', size: 2048 }],
        executionId: 'exe_2',
      });

    const out = await invoke(createExecuteTool(), { command: 'make report' }, ctx());

    expect(out.text).toBe(
      'done\n\nExit code: 0\n\nfiles changed: /out/report.csv\n\nfiles deleted: /tmp.txt\n\nartifacts:\n- /artifacts/plot.png (image/png, 2 KB) id art_1',
    );
    expect(out.artifact.execution).toEqual({ id: 'exe_2', status: 'ok', artifacts: [expect.objectContaining({ id: 'art_1' })] });
  });

  it('should ask for the time limit the model gives, else the configured one, and never an idempotency key', async () => {
    const { sandbox, ctx } = makeHarness();
    await invoke(createExecuteTool({ executionTimeoutMs: 5_000 }), { command: 'make' }, ctx());
    await invoke(createExecuteTool({ executionTimeoutMs: 5_000 }), { command: 'make test', timeout_ms: 120_000 }, ctx());
    expect(sandbox.commands.map((c) => c.options)).toEqual([{ timeoutMs: 5_000 }, { timeoutMs: 120_000 }]);
  });

  it("should hand the run's abort signal to the sandbox, so a cancelled run stops the command", async () => {
    const { sandbox, ctx } = makeHarness();
    const abort = new AbortController();
    const sut = createExecuteTool();
    await sut.invoke({ id: 'call_1', name: sut.name, args: { command: 'sleep 1' }, type: 'tool_call' }, { configurable: { [CONFIG_TOOL_CALL]: ctx() }, signal: abort.signal });

    const received = sandbox.commands[0]!.options!.signal!;
    expect(received.aborted).toBe(false);
    abort.abort();
    expect(received.aborted).toBe(true);
  });

  it('should refuse an empty command without running anything', async () => {
    const { sandbox, ctx } = makeHarness();
    const out = await invoke(createExecuteTool(), { command: ' \n' }, ctx());
    expect(out.text).toBe('Error: command is empty; pass the shell command to run, e.g. "ls -la".');
    expect(out.artifact.isError).toBe(true);
    expect(sandbox.commands).toHaveLength(0);
  });

  it('should have a large output evicted like other tool results, its exit code kept in the preview', async () => {
    const { sandbox, ctx } = makeHarness();
    const rows = Array.from({ length: 4000 }, (_, i) => `row ${i + 1} `.padEnd(49, 'x')).join('\n');
    sandbox.respondToCommand = () => okCommand({ output: `${rows}\n` });
    const out = await invoke(createExecuteTool(), { command: 'cat big.txt' }, ctx());

    const store = new BackendEvictionStore(sandbox, backendContextOf(ctx()));
    const outcome = await new ToolResultEvictor().process({ toolName: EXECUTE_TOOL_NAME, toolCallId: 'call_1', content: out.text }, store);

    expect(outcome).toMatchObject({ evicted: true, path: '/large_tool_results/call_1' });
    expect(outcome.content.length).toBeLessThan(5_000);
    expect(outcome.content).toContain('row 1 ');
    expect(outcome.content).toContain('Exit code: 0');
    expect(await sandbox.read(backendContextOf(ctx()), '/large_tool_results/call_1', { offset: 4001 })).toMatchObject({ lines: ['Exit code: 0'] });
  });

  it('should keep two concurrent calls through one instance in their own threads', async () => {
    const { sandbox, ctx } = makeHarness();
    // The first call answers last, so a tool that kept per-call state would mix them up.
    sandbox.respondToCommand = async ({ ctx: c, command }) => {
      await delay(c.threadId === 'chat-1' ? 30 : 1);
      return okCommand({ output: `${c.tenantId}/${c.threadId} ran ${command}\n` });
    };
    const sut = createExecuteTool();

    const [one, two] = await Promise.all([
      invoke(sut, { command: 'a' }, ctx({ toolCallId: 'call_1' })),
      invoke(sut, { command: 'b' }, ctx({ tenantId: 'ten_b', threadId: 'chat-2', toolCallId: 'call_2' })),
    ]);

    expect(one.text).toBe('ten_a/chat-1 ran a\n\nExit code: 0');
    expect(one.message.tool_call_id).toBe('call_1');
    expect(two.text).toBe('ten_b/chat-2 ran b\n\nExit code: 0');
    expect(two.message.tool_call_id).toBe('call_2');
  });
});
