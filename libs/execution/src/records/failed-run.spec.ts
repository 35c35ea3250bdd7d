import { failedRun, failedRunOutcome } from './failed-run.js';

describe(failedRun.name, () => {
  it('should record the failure as the error of a run that produced nothing', () => {
    const sut = failedRun({ status: 'killed', name: 'WorkerLost', value: 'The worker stopped.' });
    expect(sut).toEqual({
      status: 'killed',
      stdout: '',
      stderr: '',
      truncated: false,
      result: null,
      error: { name: 'WorkerLost', value: 'The worker stopped.', traceback: '' },
      stateLost: false,
      durationMs: 0,
      files: { changed: [], deleted: [], skipped: [] },
      artifacts: [],
      artifactsSkipped: [],
    });
  });

  it('should give the sandbox-side outcome the same fields, with an empty listing', () => {
    const failure = { status: 'memory', name: 'MemoryError', value: 'Out of memory.', durationMs: 12 } as const;
    const outcome = failedRunOutcome(failure);
    expect(outcome).toMatchObject({ status: 'memory', durationMs: 12, artifacts: { files: [], skipped: [] }, figures: [] });
    const { artifacts: _a, figures: _f, ...common } = outcome;
    const { artifacts: _r, artifactsSkipped: _s, ...recorded } = failedRun(failure);
    expect(recorded).toEqual(common);
  });
});
