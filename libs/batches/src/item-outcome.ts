import { failedRunOutcome, type RunOutcome } from '@drydock/execution';
import type { ItemOutcome } from './batch.types.js';

// An item's record from its sandbox run and the artifacts ingested from it.
export function itemOutcomeOf(outcome: RunOutcome, artifacts: unknown[]): ItemOutcome {
  return {
    status: outcome.status,
    stdout: outcome.stdout,
    stderr: outcome.stderr,
    truncated: outcome.truncated,
    result: outcome.result,
    error: outcome.error,
    files: outcome.files,
    artifacts,
    durationMs: outcome.durationMs,
    cpuMs: outcome.cpuMs ?? null,
  };
}

// An item that produced nothing of its own (it never ran, or its sandbox went), built
// like every other failed run (failedRunOutcome).
export function failedItem(name: string, value: string): ItemOutcome {
  return itemOutcomeOf(failedRunOutcome({ status: 'killed', name, value }), []);
}
