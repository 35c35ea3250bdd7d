import { createExecutePythonTool } from './execute-python.tool.js';
import { STATE_LOST_TEXT } from './render-execution.js';
import { invoke, makeHarness, okRun } from './tools.spec-helper.js';

const delay = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

describe('execute_python tool', () => {
  it('should run the code in the calling thread and show its output and value', async () => {
    const { sandbox, ctx } = makeHarness();
    sandbox.respond = () => okRun({ stdout: 'hello\n', result: { text: '42', html: undefined }, executionId: 'exe_1' });
    const out = await invoke(createExecutePythonTool(), { code: 'print("hello")\n6 * 7' }, ctx());

    expect(out.text).toBe('stdout:\nhello\n\nresult:\n42');
    expect(out.artifact).toEqual({ execution: { id: 'exe_1', status: 'ok' } });
    expect(sandbox.calls).toEqual([
      { ctx: { tenantId: 'ten_a', threadId: 'chat-1', stateFiles: {} }, code: 'print("hello")\n6 * 7', options: {} },
    ]);
  });

  it('should never pass an idempotency key, and pass the configured time limit', async () => {
    const { sandbox, ctx } = makeHarness();
    await invoke(createExecutePythonTool({ executionTimeoutMs: 5000 }), { code: 'x = 1' }, ctx());
    expect(sandbox.calls[0].options).toEqual({ timeoutMs: 5000 });
  });

  it('should say so when a run succeeds with no output', async () => {
    const { ctx } = makeHarness();
    const out = await invoke(createExecutePythonTool(), { code: 'x = 1' }, ctx());
    expect(out.text).toBe('The code ran successfully with no output: nothing was printed and the last line has no value.');
    expect(out.artifact.isError).toBeUndefined();
  });

  it('should return a Python exception as its name, value and traceback', async () => {
    const { sandbox, ctx } = makeHarness();
    const traceback =
      'Traceback (most recent call last):\n  File "<cell-1>", line 2, in <module>\n    1 / 0\nZeroDivisionError: division by zero\n';
    sandbox.respond = () =>
      okRun({ status: 'error', stdout: 'before\n', error: { name: 'ZeroDivisionError', value: 'division by zero', traceback } });
    const out = await invoke(createExecutePythonTool(), { code: 'print("before")\n1 / 0' }, ctx());

    expect(out.text).toBe(`stdout:\nbefore\n\nerror: ZeroDivisionError: division by zero\n${traceback.trimEnd()}`);
    expect(out.artifact).toEqual({ isError: true, execution: { status: 'error' } });
  });

  it('should say the run timed out and what to do about it', async () => {
    const { sandbox, ctx } = makeHarness();
    sandbox.respond = () => okRun({ status: 'timeout', stdout: 'step 1\n' });
    const out = await invoke(createExecutePythonTool(), { code: 'while True: pass' }, ctx());
    expect(out.text).toBe(
      'stdout:\nstep 1\n\ntimeout: The code ran past its time limit and was stopped; output up to that point is shown above. ' +
        'Make it faster, work on less data, or split the work into smaller runs.',
    );
    expect(out.artifact).toEqual({ isError: true, execution: { status: 'timeout' } });
  });

  it('should say the run ran out of memory', async () => {
    const { sandbox, ctx } = makeHarness();
    sandbox.respond = () => okRun({ status: 'memory' });
    const out = await invoke(createExecutePythonTool(), { code: 'x = [0] * 10**12' }, ctx());
    expect(out.text).toMatch(/^memory: The code ran out of memory and the Python process was restarted/);
    expect(out.artifact).toEqual({ isError: true, execution: { status: 'memory' } });
  });

  it('should tell the model its variables were lost', async () => {
    const { sandbox, ctx } = makeHarness();
    sandbox.respond = () => okRun({ stateLost: true, stdout: '1\n' });
    const out = await invoke(createExecutePythonTool(), { code: 'print(1)' }, ctx());
    expect(out.text).toBe(`${STATE_LOST_TEXT}\n\nstdout:\n1`);
    expect(out.text).toContain('variables, imports and functions from earlier runs are gone');
  });

  it('should refuse empty code without running anything', async () => {
    const { sandbox, ctx } = makeHarness();
    const out = await invoke(createExecutePythonTool(), { code: '  \n' }, ctx());
    expect(out.text).toBe('Error: code is empty; pass the Python code to run.');
    expect(out.artifact.isError).toBe(true);
    expect(sandbox.calls).toHaveLength(0);
  });

  it('should keep two concurrent calls through one instance in their own threads', async () => {
    const { sandbox, ctx } = makeHarness();
    // The first call answers last, so a tool that kept per-call state would mix them up.
    sandbox.respond = async ({ ctx: c, code }) => {
      await delay(c.threadId === 'chat-1' ? 30 : 1);
      return okRun({ stdout: `${c.tenantId}/${c.threadId} ran ${code}\n` });
    };
    const sut = createExecutePythonTool();

    const [one, two] = await Promise.all([
      invoke(sut, { code: 'a()' }, ctx({ toolCallId: 'call_1' })),
      invoke(sut, { code: 'b()' }, ctx({ tenantId: 'ten_b', threadId: 'chat-2', toolCallId: 'call_2' })),
    ]);

    expect(one.text).toBe('stdout:\nten_a/chat-1 ran a()');
    expect(one.message.tool_call_id).toBe('call_1');
    expect(two.text).toBe('stdout:\nten_b/chat-2 ran b()');
    expect(two.message.tool_call_id).toBe('call_2');
  });
});
