import type { JobError } from './job-errors.js';
import type { ExecuteJobData, JobReplyRoute } from './queue.constants.js';

// Executions go to their worker through a plain Redis list per worker, not BullMQ
// (docs/decisions/011-execution-lane.md). An execution needs none of BullMQ's job
// bookkeeping: its record in PostgreSQL is its result, a redelivery is harmless (the
// run-once claim), and a worker that dies is noticed by its heartbeat, not by a
// stalled-job check. What it costs on BullMQ is three to six Lua scripts, each with
// event-stream writes, per run; on the lane it is one LPUSH, one blocking LMOVE and one
// MULTI.
//
// - A gateway LPUSHes the job (JSON) onto the worker's lane.
// - The worker moves it atomically (BLMOVE) to its `active` list, runs it, then in one
//   MULTI: stores the outcome under the dispatch's id, publishes the reply to the
//   gateway, and removes the job from `active`.
// - A gateway that missed the reply finds the job in the lane, in `active` or as an
//   outcome; if it is in none of them twice in a row, it was lost (with Redis' data)
//   and the caller reads the record.

// Jobs waiting for the worker, oldest on the right.
export function executionLaneKey(workerId: string): string {
  return `drydock:exec-lane:${workerId}`;
}

// Jobs the worker has taken and not yet answered.
export function executionLaneActiveKey(workerId: string): string {
  return `drydock:exec-lane-active:${workerId}`;
}

// How one dispatch ended, for a gateway that missed its reply. Keyed by the dispatch,
// not the execution: a run sent again to another worker (SESSION_MOVED) is another
// dispatch.
export function executionOutcomeKey(dispatchId: string): string {
  return `drydock:exec-outcome:${dispatchId}`;
}

// Gateways look for a missed reply every heartbeat period; this is far longer.
export const EXECUTION_OUTCOME_TTL_S = 300;

export interface ExecutionLaneJob extends ExecuteJobData, JobReplyRoute {
  // The execution's job id (jobIdFor), as in its reply.
  jobId: string;
  // This dispatch: names its outcome key.
  dispatchId: string;
  // When the gateway sent it (ms since the epoch), for the queue-wait metric.
  enqueuedAt: number;
}

// `ok`: the record in PostgreSQL is final. `error`: the typed failure (the code did not
// run). `lost`: the worker restarted with the job taken and unanswered; its run's fate
// is unknown.
export type ExecutionOutcome = { ok: true } | { ok: false; error: JobError } | { lost: true };
