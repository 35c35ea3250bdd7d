import { DrydockError } from '@drydock/core';

// Failures of the LangGraph-compatible API. Codes are stable (tests and docs/api.md
// name them); the body is the gateway's usual {error: {code, message}}.
export class LangGraphError extends DrydockError {
  static threadNotFound(threadId: string) {
    return new LangGraphError('THREAD_NOT_FOUND', `No thread with id ${threadId}.`, 404);
  }
  static threadExists(threadId: string) {
    return new LangGraphError(
      'THREAD_EXISTS',
      `Thread ${threadId} already exists; send "if_exists": "do_nothing" to get it back instead.`,
      409,
    );
  }
  static threadBusy(threadId: string) {
    return new LangGraphError(
      'THREAD_BUSY',
      `Thread ${threadId} is running a run already; wait for it to finish, then try again.`,
      409,
    );
  }
  static invalidThreadId(value: string) {
    return new LangGraphError('INVALID_THREAD_ID', `A thread id must be a UUID; got ${JSON.stringify(value.slice(0, 80))}.`, 400);
  }
  static invalidCheckpointId(value: string) {
    return new LangGraphError('INVALID_CHECKPOINT_ID', `A checkpoint id must be a UUID; got ${JSON.stringify(value.slice(0, 80))}.`, 400);
  }
  static checkpointNotFound(checkpointId: string) {
    return new LangGraphError('CHECKPOINT_NOT_FOUND', `This thread has no checkpoint ${checkpointId}.`, 404);
  }
  static invalidInput(reason: string) {
    return new LangGraphError('INVALID_INPUT', `The run input is invalid: ${reason}.`, 400);
  }
  static invalidStreamMode(mode: unknown, supported: readonly string[]) {
    return new LangGraphError(
      'INVALID_STREAM_MODE',
      `Stream mode ${JSON.stringify(mode)} is not supported; use ${supported.map((m) => `"${m}"`).join(', ')}.`,
      400,
    );
  }
  static invalidStateUpdate(reason: string) {
    return new LangGraphError('INVALID_STATE_UPDATE', `The state update was refused: ${reason}.`, 400);
  }
  // An option of the LangGraph Platform API that this gateway does not implement: refused
  // rather than ignored, so that a client never believes it took effect.
  static unsupported(option: string, hint = '') {
    return new LangGraphError(
      'UNSUPPORTED_OPTION',
      `"${option}" is not supported by this server${hint ? `; ${hint}` : ''}.`,
      400,
    );
  }
  static agentUnavailable() {
    return new LangGraphError(
      'AGENT_UNAVAILABLE',
      'The agent is not available on this gateway (no agent runtime is configured).',
      503,
    );
  }
  // The graph failed after the run started (model endpoint, tool node): not the
  // caller's input and not a gateway bug, so 502 like any failed upstream.
  static runFailed(message: string) {
    return new LangGraphError('RUN_FAILED', message, 502);
  }
  // The run finished, but the database did not confirm its end (the release of the
  // thread, whose commit makes the run's checkpoints durable).
  static runNotConfirmed() {
    return new LangGraphError(
      'RUN_NOT_CONFIRMED',
      'The run finished but the database did not confirm it was saved; read the thread state before running it again.',
      503,
    );
  }
  // The same code for a run that lost its thread (deleted, alone or with its tenant, or
  // taken over by a newer run): nothing of it was kept.
  static runLostThread() {
    return new LangGraphError(
      'RUN_NOT_CONFIRMED',
      'The run lost its thread (deleted, or taken over by a newer run) and was stopped; nothing of it was saved. Read the thread state before running it again.',
      503,
    );
  }
  // The client went away (or aborted): the run stopped where it was.
  static runCancelled() {
    return new LangGraphError('RUN_CANCELLED', 'The run was cancelled because its client disconnected.', 409);
  }
  static recursionLimit(message: string) {
    return new LangGraphError('RECURSION_LIMIT', `${message} Raise "config.recursion_limit" or simplify the task.`, 422);
  }
}
