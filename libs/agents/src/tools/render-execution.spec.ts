import { EMPTY_RUN_TEXT, renderExecution, STATE_LOST_TEXT, TRUNCATED_TEXT } from './render-execution.js';
import { okRun } from './tools.spec-helper.js';

describe(renderExecution.name, () => {
  it('should put every section in a fixed order under its header', () => {
    const [text, artifact] = renderExecution(
      okRun({
        status: 'error',
        stateLost: true,
        stdout: 'out\n',
        stderr: 'warn\n',
        error: { name: 'ValueError', value: 'bad', traceback: 'Traceback ...\nValueError: bad\n' },
        truncated: true,
        files: { changed: ['/out/a.csv'], deleted: ['/tmp/x'] },
        artifacts: [{ id: 'art_1', path: '/artifacts/plot.png', mime: 'image/png', size: 2048 }],
        executionId: 'exe_1',
      }),
    );
    expect(text).toBe(
      [
        STATE_LOST_TEXT,
        'stdout:\nout',
        'stderr:\nwarn',
        'error: ValueError: bad\nTraceback ...\nValueError: bad',
        TRUNCATED_TEXT,
        'files changed: /out/a.csv',
        'files deleted: /tmp/x',
        'artifacts:\n- /artifacts/plot.png (image/png, 2 KB) id art_1',
      ].join('\n\n'),
    );
    expect(artifact).toEqual({
      isError: true,
      execution: {
        id: 'exe_1',
        status: 'error',
        artifacts: [{ id: 'art_1', path: '/artifacts/plot.png', mime: 'image/png', size: 2048 }],
      },
    });
  });

  it('should say so when a successful run has nothing to show', () => {
    expect(renderExecution(okRun())).toEqual([EMPTY_RUN_TEXT, { execution: { status: 'ok' } }]);
  });

  it('should show the value text, and name a value that is only a picture', () => {
    expect(renderExecution(okRun({ result: { text: "'ok'" } }))[0]).toBe("result:\n'ok'");
    expect(renderExecution(okRun({ result: { png: 'iVBOR' } }))[0]).toBe('result:\n(a PNG image)');
    expect(renderExecution(okRun({ result: { text: '<Figure>', png: 'iVBOR' } }))[0]).toBe('result:\n<Figure>\n(and a PNG image)');
  });

  it('should explain a killed run and one with no details', () => {
    const [killed, artifact] = renderExecution(okRun({ status: 'killed' }));
    expect(killed).toMatch(/^killed: The run was stopped before it finished/);
    expect(artifact).toEqual({ isError: true, execution: { status: 'killed' } });
    expect(renderExecution(okRun({ status: 'error' }))[0]).toBe('error: The code raised an exception, but no details were reported.');
  });

  it('should name at most 20 changed files and count the rest', () => {
    const changed = Array.from({ length: 23 }, (_, i) => `/f${i}`);
    const [text] = renderExecution(okRun({ files: { changed, deleted: [] } }));
    expect(text).toBe(`files changed: ${changed.slice(0, 20).join(', ')} and 3 more`);
  });
});
