import { mkdtempSync, rmSync, writeFileSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { runReplCells } from '../python-tools/repl-harness.spec-helper.js';
import { createPythonRunPreparedTool, runFileCell } from './python-run-prepared.tool.js';
import { NO_EXTRACTED_CONTENT_TEXT } from './extracted-content.js';
import { invoke, makeHarness, okRun } from './tools.spec-helper.js';

const scope = { tenantId: 'ten_a', threadId: 'chat-1' };
const args = { file_path: '/scripts/fib.py', description: 'First Fibonacci numbers' };
const code = 'a, b = 0, 1\nfor _ in range(5):\n    print(a)\n    a, b = b, a + b\n';

describe('python_run_prepared tool', () => {
  it('should save the extracted code to the thread, then run that file in the session', async () => {
    const { vfs, sandbox, ctx } = makeHarness();
    let seenByRun: string | null = null;
    sandbox.respond = async ({ ctx: c }) => {
      // The run must find the file already in the thread's files (which /session mirrors).
      seenByRun = (await vfs.readContent(c, '/scripts/fib.py')).content.toString();
      return okRun({ stdout: '0\n1\n1\n2\n3\n', executionId: 'exe_7' });
    };
    const out = await invoke(createPythonRunPreparedTool(), args, ctx({ extracted: { content: code } }));

    expect(seenByRun).toBe(code);
    expect(sandbox.calls).toHaveLength(1);
    expect(sandbox.calls[0].code).toBe(runFileCell('/scripts/fib.py'));
    expect(sandbox.calls[0].options).toEqual({});
    expect(out.text).toBe(
      'Saved the code to /scripts/fib.py (/session/scripts/fib.py in the session) and ran it.\n\nstdout:\n0\n1\n1\n2\n3',
    );
    expect(out.artifact).toEqual({ execution: { id: 'exe_7', status: 'ok' } });
  });

  it('should run the file in the session namespace, as its own path', () => {
    expect(runFileCell('/scripts/fib.py')).toBe(
      '__file__ = "/session/scripts/fib.py"\n' +
        'exec(compile(open(__file__, encoding="utf-8").read(), __file__, "exec"), globals())\n',
    );
    // Paths enter the cell only as escaped literals.
    expect(runFileCell('/a"b\n.py')).toContain('__file__ = "/session/a\\"b\\n.py"\n');
  });

  it('should leave what the script defines in the session for later runs, as __main__', () => {
    const dir = mkdtempSync(join(tmpdir(), 'drydock-run-file-'));
    try {
      writeFileSync(
        join(dir, 'fib.py'),
        'def fib(n):\n    return n if n < 2 else fib(n - 1) + fib(n - 2)\nif __name__ == "__main__":\n    ran = fib(10)\n',
      );
      writeFileSync(join(dir, 'bad.py'), 'x = 1\nundefined_name\n');
      const [run, later, bad] = runReplCells([runFileCell('/fib.py', dir), '(ran, fib(5), __file__)', runFileCell('/bad.py', dir)]);
      expect(run).toMatchObject({ value: null });
      expect(later.value).toBe(`(55, 5, '${join(dir, 'fib.py')}')`);
      expect(bad.error).toBe("NameError: name 'undefined_name' is not defined");
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  });

  it('should replace an earlier version of the script', async () => {
    const { vfs, sandbox, ctx } = makeHarness();
    await sandbox.write(ctx(), '/scripts/fib.py', 'old');
    await invoke(createPythonRunPreparedTool(), args, ctx({ extracted: { content: code } }));
    expect((await vfs.readContent(scope, '/scripts/fib.py')).content.toString()).toBe(code);
  });

  it('should show the exception with its traceback', async () => {
    const { sandbox, ctx } = makeHarness();
    const traceback =
      'Traceback (most recent call last):\n  File "/session/scripts/fib.py", line 3, in <module>\n    print(x)\nNameError: name \'x\' is not defined\n';
    sandbox.respond = () => okRun({ status: 'error', error: { name: 'NameError', value: "name 'x' is not defined", traceback } });
    const out = await invoke(createPythonRunPreparedTool(), args, ctx({ extracted: { content: 'print(x)' } }));
    expect(out.text).toBe(
      'Saved the code to /scripts/fib.py (/session/scripts/fib.py in the session) and ran it.\n\n' +
        `error: NameError: name 'x' is not defined\n${traceback.trimEnd()}`,
    );
    expect(out.artifact.isError).toBe(true);
  });

  it('should do nothing and say how to provide the code when no block was extracted', async () => {
    const { vfs, sandbox, ctx } = makeHarness();
    const out = await invoke(createPythonRunPreparedTool(), args, ctx());
    expect(out.text).toBe(NO_EXTRACTED_CONTENT_TEXT);
    expect(out.artifact).toEqual({ isError: true });
    expect(sandbox.calls).toHaveLength(0);
    expect(await vfs.exists(scope, '/scripts/fib.py')).toBe(false);
  });

  it('should return the extraction error and do nothing', async () => {
    const { vfs, sandbox, ctx } = makeHarness();
    const error = 'No fenced code block is left in your message for python_run_prepared(file_path="/scripts/fib.py").';
    const out = await invoke(createPythonRunPreparedTool(), args, ctx({ extracted: { error } }));
    expect(out.text).toBe(`Error: ${error}`);
    expect(sandbox.calls).toHaveLength(0);
    expect(await vfs.exists(scope, '/scripts/fib.py')).toBe(false);
  });

  it('should refuse to keep the script where artifacts are collected', async () => {
    const { sandbox, ctx } = makeHarness();
    const out = await invoke(
      createPythonRunPreparedTool(),
      { ...args, file_path: '/artifacts/run.py' },
      ctx({ extracted: { content: code } }),
    );
    expect(out.text).toMatch(/^Error: \/artifacts\/run\.py cannot hold the script: .* Save it elsewhere, e.g\. \/scripts\/analysis\.py\.$/);
    expect(sandbox.calls).toHaveLength(0);
  });

  it('should answer an invalid path as text without running', async () => {
    const { sandbox, ctx } = makeHarness();
    const out = await invoke(createPythonRunPreparedTool(), { ...args, file_path: '../x.py' }, ctx({ extracted: { content: code } }));
    expect(out.text).toMatch(/^Error: Invalid path "\.\.\/x\.py": it climbs above the root directory/);
    expect(sandbox.calls).toHaveLength(0);
  });
});
