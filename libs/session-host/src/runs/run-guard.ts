// Makes sure an execution's code runs at most once, whatever delivers its job again (an
// idempotent retry of an unfinished execution, a resend after SESSION_MOVED, BullMQ's
// redelivery of an older gateway's job).
export interface RunGuard {
  // True for the first caller for this execution id while its claim lasts (`holdMs`),
  // false for every later one.
  claim(executionId: string, holdMs: number): Promise<boolean>;
}

export const RUN_GUARD = Symbol('RUN_GUARD');

export function runClaimKey(executionId: string): string {
  return `drydock:exec-claimed:${executionId}`;
}

// Covers what a claim must outlive besides the start deadline: clock skew between the
// gateway that recorded the execution and the worker, and the work after the code ran
// (reading files back, ingesting artifacts, each waiting out an outage of up to 2 min).
export const CLAIM_MARGIN_MS = 15 * 60_000;

// Jobs from a gateway that predates `recordedAt`: no deadline can be applied, so their
// claim lasts as long as claims always did.
export const LEGACY_CLAIM_MS = 7 * 24 * 3600_000;

// Whether a job may still start, and how long its claim must then last.
//
// An execution that has not started within `deadlineMs` of being recorded is never run
// (its job is refused and its record says so). So a claim needs to last only until no
// delivery of the execution can start any more, or its own run is over, whichever is
// later: any earlier claim of the same execution was made after it was recorded, and
// lives past the deadline. Claims then expire within about an hour of their execution
// instead of piling up in Redis for a week (at 500 runs/s, 300 million keys, ~31 GB).
export function runWindow(
  job: { recordedAt?: number; timeoutMs: number },
  deadlineMs: number,
  now = Date.now(),
): { expired: true } | { expired: false; holdMs: number } {
  if (job.recordedAt === undefined) return { expired: false, holdMs: LEGACY_CLAIM_MS };
  const left = job.recordedAt + deadlineMs - now;
  if (left <= 0) return { expired: true };
  return { expired: false, holdMs: left + job.timeoutMs + CLAIM_MARGIN_MS };
}
