import type { JobDataByName, JobName } from './queue.constants.js';

// The port the gateway's services use to hand work to a worker and wait for its
// answer; its BullMQ implementation lives in the gateway.
export interface JobDispatcher {
  dispatch<N extends JobName, R>(
    workerId: string,
    name: N,
    data: JobDataByName[N],
    // `push`, for an execution: sends its job (the serialized `payload` for the list
    // `lane`) instead of a plain LPUSH, so the caller's admission goes in the same round
    // trip; a rejection ends the dispatch with it.
    options: { waitMs: number; push?: (lane: string, payload: string) => Promise<void> },
  ): Promise<R>;
  // Live output published by the worker while a job runs; returns an unsubscribe.
  subscribeOutput(executionId: string, onEvent: (event: StreamEvent) => void): Promise<() => Promise<void>>;
  // The JSON messages a worker publishes on `topic` (a background process's events,
  // processEventsChannel); resolves once subscribed, with the unsubscribe.
  subscribe(topic: string, onMessage: (message: unknown) => void): Promise<() => Promise<void>>;
  // Publishes a JSON message on `topic` for the worker listening there (a terminal's
  // input, terminalInputChannel). Messages of one gateway on one topic arrive in order.
  publish(topic: string, message: unknown): Promise<void>;
  // Asks the worker to stop the execution if it is running there or still waiting for
  // its turn; nothing when it has ended. Marks the execution interrupted along with it
  // (see markInterrupted). Resolves once the request is sent.
  interrupt(workerId: string, executionId: string): Promise<void>;
  // Leaves the mark (executionInterruptedKey) by which a resend or a reconnecting worker
  // finds an interrupt whose message went astray, for as long as the execution can run.
  markInterrupted(executionId: string): Promise<void>;
  // Whether the execution was marked interrupted.
  interruptRequested(executionId: string): Promise<boolean>;
}

export interface StreamEvent {
  name: 'stdout' | 'stderr';
  text: string;
}

export const JOB_DISPATCHER = Symbol('JOB_DISPATCHER');

// No reply within the wait, and Redis went away meanwhile (the job or its reply may have
// been lost with it): an outage to retry, not a run that is merely slow.
export class WaitSpannedOutageError extends Error {
  constructor(waitMs: number) {
    super(`no result within ${waitMs} ms, across a Redis outage`);
    this.name = 'WaitSpannedOutageError';
  }
}

// The worker a job was sent to stopped heartbeating before the job finished.
export class WorkerLostError extends Error {
  constructor(readonly workerId: string) {
    super(`worker ${workerId} stopped before finishing the job`);
    this.name = 'WorkerLostError';
  }
}
