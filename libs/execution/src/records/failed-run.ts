import { emptyChangeReport, type RunOutcome } from '../runtime/sandbox-runtime.js';
import type { CompletedRun } from './executions.repository.js';

// Why a run produced no output of its own: the code never ran (the sandbox could not
// start, the files could not be copied in, the worker was lost, it was interrupted
// before it started) or its sandbox died under it. `name` is the error name clients see
// (`SandboxUnavailable`, `WorkerLost`, `KeyboardInterrupt`, ...).
export interface RunFailure {
  status: Extract<RunOutcome['status'], 'error' | 'killed' | 'timeout' | 'memory'>;
  name: string;
  value: string;
  durationMs?: number;
}

// The one place a failed run's record is built: the worker (sandbox unavailable, file
// push failed), the Docker sandbox (container gone) and the gateway (worker lost) all
// use it, so every failed record has the same shape.
export function failedRunOutcome(failure: RunFailure): RunOutcome {
  return {
    status: failure.status,
    stdout: '',
    stderr: '',
    truncated: false,
    result: null,
    error: { name: failure.name, value: failure.value, traceback: '' },
    stateLost: false,
    durationMs: failure.durationMs ?? 0,
    // Nothing was read back: the sandbox never ran the code or is gone.
    files: emptyChangeReport(),
    artifacts: { files: [], skipped: [] },
    figures: [],
  };
}

// The same failure as the execution record stores it.
export function failedRun(failure: RunFailure): CompletedRun {
  const { artifacts: _listing, figures: _figures, trackingMs: _tracking, ...rest } = failedRunOutcome(failure);
  return { ...rest, files: emptyChangeReport(), artifacts: [], artifactsSkipped: [] };
}
