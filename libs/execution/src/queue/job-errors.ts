import { DrydockError } from '@drydock/core';

// A failure as it crosses the queue: every DrydockError the worker throws keeps its
// stable code, HTTP status, message and details, so the gateway can rethrow it as the
// caller's own error instead of a wait timeout or a 500.
export interface JobError {
  code: string;
  status: number;
  message: string;
  details?: Record<string, unknown>;
}

// Anything else the worker throws is a bug or an infrastructure failure there; the
// caller gets this code and the worker's log has the cause.
export const WORKER_FAILED = 'WORKER_FAILED';

export function toJobError(error: unknown): JobError {
  if (error instanceof DrydockError) {
    const wire: JobError = { code: error.code, status: error.status, message: error.message };
    if (error.details) wire.details = error.details;
    return wire;
  }
  return {
    code: WORKER_FAILED,
    status: 502,
    message: 'The worker could not complete this request; the failure has been logged there. Try again.',
  };
}

// The gateway's side: the same error, thrown again. A reply from a worker that predates
// typed errors carries only a message.
export function fromJobError(error: JobError | string): DrydockError {
  if (typeof error === 'string' || !isJobError(error)) {
    return new DrydockError(WORKER_FAILED, `The worker could not complete this request: ${String(typeof error === 'string' ? error : 'unknown error')}`, 502);
  }
  return new DrydockError(error.code, error.message, error.status, error.details);
}

export function isJobError(value: unknown): value is JobError {
  const v = value as Partial<JobError> | null;
  return (
    typeof v === 'object' &&
    v !== null &&
    typeof v.code === 'string' &&
    typeof v.status === 'number' &&
    Number.isInteger(v.status) &&
    v.status >= 400 &&
    v.status < 600 &&
    typeof v.message === 'string'
  );
}
