import { DrydockError } from '@drydock/core';

export class SessionsError extends DrydockError {
  static notFound(sessionId: string) {
    return new SessionsError('SESSION_NOT_FOUND', `No session with id ${sessionId}.`, 404);
  }
  static ended(sessionId: string) {
    return new SessionsError(
      'SESSION_ENDED',
      `Session ${sessionId} has ended; create a new session for its thread.`,
      409,
    );
  }
  static executionNotFound(executionId: string) {
    return new SessionsError('EXECUTION_NOT_FOUND', `No execution with id ${executionId}.`, 404);
  }
  static noWorker() {
    return new SessionsError(
      'NO_WORKER_AVAILABLE',
      'No worker is available to host a session right now; try again shortly.',
      503,
    );
  }
  static tooManySessions(max: number) {
    return new SessionsError(
      'SESSION_QUOTA_EXCEEDED',
      `This tenant already has ${max} live sessions, its maximum; delete one first.`,
      429,
    );
  }
  static idempotencyConflict(key: string) {
    return new SessionsError(
      'IDEMPOTENCY_KEY_REUSED',
      `Idempotency key "${key}" was already used for a different session or code.`,
      409,
    );
  }
  static sandboxFailed(message: string) {
    return new SessionsError('SANDBOX_UNAVAILABLE', `The sandbox could not be started: ${message}`, 503);
  }
  // Between worker and gateway: the session's worker drained and handed it back while
  // this job waited in its queue; the gateway places the session again and resends.
  static moved(sessionId: string) {
    return new SessionsError(
      'SESSION_MOVED',
      `Session ${sessionId} is moving to another worker; retry in a moment.`,
      503,
      { retryAfterSeconds: 1 },
    );
  }
  static tierNotAvailable(tier: string) {
    return new SessionsError(
      'TIER_NOT_AVAILABLE',
      `This deployment does not offer the "${tier}" tier (the operator sets SANDBOX_GVISOR_RUNTIME for gvisor).`,
      422,
    );
  }
  static tierNotAllowed(tier: string, allowed: readonly string[]) {
    return new SessionsError('TIER_NOT_ALLOWED', `This tenant's sessions may run on ${allowed.join(', ')}, not on "${tier}".`, 422, {
      allowed,
    });
  }
  // Hibernate and snapshots need a sandbox that can be checkpointed (decision 018).
  static checkpointNotAvailable(sessionId: string, why: string) {
    return new SessionsError('CHECKPOINT_NOT_AVAILABLE', `Session ${sessionId} cannot be checkpointed: ${why}`, 422);
  }
  static checkpointBusy(sessionId: string, why: string) {
    return new SessionsError('SESSION_BUSY', `Session ${sessionId} cannot be checkpointed right now: ${why}. Try again when it is idle.`, 409);
  }
  static snapshotQuota(which: 'count' | 'bytes', max: number) {
    return new SessionsError(
      'SNAPSHOT_QUOTA_EXCEEDED',
      which === 'count'
        ? `This tenant already keeps ${max} snapshots, its maximum; delete one (DELETE /v1/snapshots/:id) first.`
        : `This snapshot would take the tenant's snapshots past ${max} bytes, its maximum; delete one first.`,
      429,
      { limit: which, max },
    );
  }
  static snapshotNotFound(snapshotId: string) {
    return new SessionsError('SNAPSHOT_NOT_FOUND', `No snapshot with id ${snapshotId}.`, 404);
  }
  static threadBusy(threadId: string) {
    return new SessionsError('THREAD_HAS_SESSION', `Thread ${threadId} already has a live session; fork into another thread (or none, for a new one).`, 409);
  }
  static waitTimeout(executionId: string) {
    return new SessionsError(
      'EXECUTION_WAIT_TIMEOUT',
      `Execution ${executionId} is still running; fetch it later with GET /v1/executions/${executionId}.`,
      504,
    );
  }
}
