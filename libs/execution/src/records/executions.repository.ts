import type { RunOutcome } from '../runtime/sandbox-runtime.js';
import type { ExecutionEntity, ExecutionFiles } from './execution.entity.js';

// What the repository returns: the row without the stored code.
export type ExecutionRecord = Omit<ExecutionEntity, 'code'>;

export interface NewExecution {
  id: string;
  sessionId: string;
  threadId: string;
  code: string;
  codeSha256: string;
  timeoutMs: number;
  idempotencyKey: string | null;
}

// A finished run as recorded: the sandbox's outcome, with its change report replaced
// by what the worker actually mirrored into the thread's files.
export type CompletedRun = Omit<RunOutcome, 'files' | 'artifacts' | 'figures' | 'trackingMs'> & {
  files: ExecutionFiles;
  // Descriptors of the artifacts the run produced (libs/artifacts).
  artifacts: unknown[];
  artifactsSkipped: { path: string; reason: string }[];
};

export interface ExecutionsRepository {
  // Inserts a queued execution, or returns the existing one when the tenant already
  // used this idempotency key (`created: false`).
  createOrGet(tenantId: string, execution: NewExecution): Promise<{ record: ExecutionRecord; created: boolean }>;
  findById(tenantId: string, executionId: string): Promise<ExecutionRecord | null>;
  // Moves a queued execution to running; false when it had already started or finished.
  markRunning(tenantId: string, executionId: string): Promise<boolean>;
  complete(tenantId: string, executionId: string, outcome: CompletedRun): Promise<ExecutionRecord>;
}

export const EXECUTIONS_REPOSITORY = Symbol('EXECUTIONS_REPOSITORY');
