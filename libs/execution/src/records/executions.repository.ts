import type { RunOutcome } from '../runtime/sandbox-runtime.js';
import type { ExecutionEntity, ExecutionFiles } from './execution.entity.js';

// What the repository returns: the row without the stored code.
export type ExecutionRecord = Omit<ExecutionEntity, 'code'>;

// A finished run as recorded: the sandbox's outcome, with its change report replaced
// by what the worker actually mirrored into the thread's files.
export type CompletedRun = Omit<RunOutcome, 'files' | 'artifacts' | 'figures' | 'trackingMs'> & {
  files: ExecutionFiles;
  // Descriptors of the artifacts the run produced (libs/artifacts).
  artifacts: unknown[];
  artifactsSkipped: { path: string; reason: string }[];
  // The run first resumed its hibernated session, in this many ms (docs/sessions.md).
  resumedMs?: number | null;
  // Why stateLost, when the platform knows (a checkpoint that could not be restored).
  stateLostReason?: string | null;
};

// An operator's query over every tenant's executions (GET /admin/executions).
export interface ExecutionFilter {
  tenantId?: string;
  status?: ExecutionRecord['status'];
  // created_at in [from, to)
  from?: Date;
  to?: Date;
  // Keyset: only executions older than this one (newest first).
  before?: { createdAt: Date; id: string };
  limit: number;
}

export interface ExecutionsRepository {
  // Executions are inserted with their session read, in one statement
  // (SessionsRepository.findWithNewExecution).
  findById(tenantId: string, executionId: string): Promise<ExecutionRecord | null>;
  // Deletes an execution that is still queued: one recorded for a run that was never
  // dispatched (its session could not be placed on a worker).
  discardQueued(tenantId: string, executionId: string): Promise<void>;
  // Moves a queued execution to running; false when it had already started or finished.
  markRunning(tenantId: string, executionId: string): Promise<boolean>;
  complete(tenantId: string, executionId: string, outcome: CompletedRun): Promise<ExecutionRecord>;
  // A background process started with this pid: its execution is `running` until it
  // ends (completeUnfinished). Null when the execution has ended already (or is gone).
  markStarted(tenantId: string, executionId: string, pid: number): Promise<ExecutionRecord | null>;
  // The session's background processes, newest first (those started: not `queued`).
  listBackground(tenantId: string, sessionId: string, limit: number): Promise<(ExecutionRecord & { code: string })[]>;
  // Ids of the session's background processes still running.
  listRunningBackground(tenantId: string, sessionId: string): Promise<string[]>;
  // Records `outcome` only on an execution still queued or running: a verdict from outside
  // the run (its worker given up for lost) never replaces what the run recorded. The
  // updated record, or null when it had finished (or is gone).
  completeUnfinished(tenantId: string, executionId: string, outcome: CompletedRun): Promise<ExecutionRecord | null>;
  // Ids of the session's executions still queued or running, oldest first.
  listUnfinished(tenantId: string, sessionId: string): Promise<string[]>;
  // Newest first (created_at, then id), across tenants unless one is named.
  list(filter: ExecutionFilter): Promise<ExecutionRecord[]>;
}

export const EXECUTIONS_REPOSITORY = Symbol('EXECUTIONS_REPOSITORY');
