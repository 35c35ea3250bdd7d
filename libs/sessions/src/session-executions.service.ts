import { createHash } from 'node:crypto';
import { Inject, Injectable, Optional } from '@nestjs/common';
import { PlatformMetrics } from '@drydock/metrics';
import { addToLogContext, APP_CONFIG, DrydockError, newId, ServiceUnavailableError, TenantRateLimiter, type AppConfig, type ExecutionAdmission, type TenantPrincipal } from '@drydock/core';
import {
  EXECUTIONS_REPOSITORY,
  failedRun,
  JOB_DISPATCHER,
  JobName,
  toExecutionView,
  type ExecutionsRepository,
  type ExecutionView,
  type JobDispatcher,
  type StreamEvent,
  WaitSpannedOutageError,
  WorkerLostError,
  type ExecutionRecord,
  type CommandSpec,
} from '@drydock/execution';
import { tenantCeiling } from './session-limits.js';
import { SessionsError } from './sessions.errors.js';
import { SESSIONS_REPOSITORY, type SessionExecutionDraft, type SessionRecord, type SessionsRepository } from './sessions.repository.js';
import { SessionsService, specOf } from './sessions.service.js';

// One run: Python `code` for the REPL, or, with `process`, a command run beside it (its
// canonical JSON is then the `code` recorded and hashed, see libs/sessions/src/commands).
export interface ExecutionRequest {
  code: string;
  process?: CommandSpec;
  // With `process`: start it as a background process; the answer is its record, running.
  background?: boolean;
  timeoutMs?: number;
  idempotencyKey?: string;
}

const FINISHED = new Set(['ok', 'error', 'timeout', 'memory', 'killed']);
// A job sent back by a draining worker is resent to the session's next worker; a
// session does not move more often than this within one request.
const MAX_MOVES = 3;

// An execution recorded (or found, by its idempotency key) on a session placed on a live
// worker.
interface Recorded {
  session: SessionRecord;
  record: ExecutionRecord;
  created: boolean;
  threadRevision?: number;
}

const sha256 = (code: string) => createHash('sha256').update(code, 'utf8').digest('hex');

// The hot path on the gateway side: record the execution, hand it to the worker that
// owns the session, wait for (and optionally relay) its output.
@Injectable()
export class SessionExecutionsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EXECUTIONS_REPOSITORY) private readonly executions: ExecutionsRepository,
    @Inject(JOB_DISPATCHER) private readonly dispatcher: JobDispatcher,
    @Inject(SESSIONS_REPOSITORY) private readonly repository: SessionsRepository,
    private readonly sessions: SessionsService,
    private readonly rateLimits: TenantRateLimiter,
    @Optional() private readonly metrics?: PlatformMetrics,
  ) {}

  async execute(
    principal: Pick<TenantPrincipal, 'tenantId' | 'limits'>,
    sessionId: string,
    command: ExecutionRequest,
    onOutput?: (event: StreamEvent) => void,
    // `signal`: aborting it interrupts the execution (a cancelled agent run); the call
    // still answers with the record, which says how the code ended.
    options: { countRequest?: boolean; signal?: AbortSignal } = {},
  ): Promise<ExecutionView> {
    const { tenantId } = principal;
    // The tenant's admission (a slot of its concurrent executions, held at most as long as
    // this request may wait; with `countRequest` also the request against its requests
    // per minute) is taken by the script that pushes the job onto its worker's lane, after
    // the execution's recording (one statement): one round trip to Redis for both. A
    // refused execution leaves nothing recorded: the row this request inserted is deleted
    // before the 429 goes out. A request that hands nothing over is still counted.
    const holdMs = Math.min((command.timeoutMs ?? this.config.defaultLimits.timeoutMs) + 60_000, this.config.gateway.maxWaitMs);
    const admission = this.rateLimits.executionAdmission({ id: tenantId, limits: principal.limits }, newId('hold'), holdMs, options);
    let recorded: Recorded;
    try {
      recorded = await this.record(principal, sessionId, command);
    } catch (error) {
      await admission.countOnly();
      throw error;
    }
    // The worker frees the slot in the round trip that answers the run; every other way
    // out of here frees it from here.
    const handedOver = { freed: false };
    try {
      const view = await this.executeHolding(principal, recorded, command, onOutput, admission, handedOver, options.signal);
      // Counted by outcome: a background process (answered `running`) has none yet.
      if (view.status !== 'running') this.metrics?.executions.inc({ tenant: tenantId, status: view.status });
      return view;
    } finally {
      // Not waited for: the release goes out now, ahead of anything this gateway sends
      // Redis later (one connection keeps the order), and before the answer leaves; the
      // caller does not wait a round trip for it. It never rejects.
      if (!handedOver.freed) void admission.release();
    }
  }

  private async executeHolding(
    principal: Pick<TenantPrincipal, 'tenantId' | 'limits'>,
    recorded: Recorded,
    command: ExecutionRequest,
    onOutput: ((event: StreamEvent) => void) | undefined,
    admission: ExecutionAdmission,
    handedOver: { freed: boolean },
    signal: AbortSignal | undefined,
  ): Promise<ExecutionView> {
    const { tenantId } = principal;
    const { session, record, created, threadRevision } = recorded;
    addToLogContext({ sessionId: session.id, executionId: record.id });
    if (!created) {
      if (record.sessionId !== session.id || record.codeSha256 !== sha256(command.code) || record.kind !== (command.process ? 'command' : 'code')) {
        await admission.countOnly();
        throw SessionsError.idempotencyConflict(command.idempotencyKey!);
      }
      if (FINISHED.has(record.status)) {
        await admission.countOnly();
        return toExecutionView(record);
      }
    }

    const unsubscribe = onOutput ? await this.dispatcher.subscribeOutput(record.id, onOutput) : undefined;
    let placed = session;
    // Sent to the worker the job went to last; if it has not started the run yet, the
    // code never runs. Fire and forget: the job's answer says how it ended.
    const interrupt = () => void this.dispatcher.interrupt(placed.workerId, record.id).catch(() => undefined);
    signal?.addEventListener('abort', interrupt, { once: true });
    if (signal?.aborted) interrupt();
    try {
      for (let attempt = 1; ; attempt++) {
        try {
          // Only this dispatch can ever deliver the execution: this request recorded it,
          // no idempotency key lets a retry name it, and it is not a resend.
          const onlyDispatch = created && record.idempotencyKey === null && attempt === 1;
          // The first push takes the admission; a resend keeps the slot it holds.
          const view = await this.dispatch(placed, record, command, { stream: onOutput !== undefined, onlyDispatch }, threadRevision, admission, attempt === 1);
          // Answered by the worker, which freed the slot with its answer.
          handedOver.freed = true;
          return view;
        } catch (error) {
          // Its worker drained while the job waited: place the session again, resend.
          if (error instanceof DrydockError && error.code === 'SESSION_MOVED' && attempt < MAX_MOVES) {
            placed = await this.sessions.ensurePlaced(await this.sessions.get(tenantId, session.id));
            // An interrupt that went to the drained worker (this caller's, or one sent
            // through the interrupt routes, which mark the execution before they read its
            // session's worker) goes to the next one ahead of the job.
            if (signal?.aborted || (await this.dispatcher.interruptRequested(record.id))) interrupt();
            continue;
          }
          throw error;
        }
      }
    } catch (error) {
      if (error instanceof DrydockError) {
        // The code did not run: the worker refused the job (the session is unknown there
        // or ended), or the tenant's admission refused it before it was pushed. No queued
        // execution is left behind, except one an earlier request with the same
        // idempotency key recorded, which is that request's to run.
        if (created || error.code !== 'RATE_LIMITED') await this.executions.discardQueued(tenantId, record.id).catch(() => undefined);
        throw error;
      }
      if (error instanceof WorkerLostError) return this.failOnLostWorker(tenantId, session.id, record.id);
      const latest = await this.executions.findById(tenantId, record.id);
      if (latest && FINISHED.has(latest.status)) return toExecutionView(latest);
      // Redis went away while it waited: a 503 to retry (with its idempotency key the
      // retry finds this execution), as every answer during an outage is.
      if (error instanceof WaitSpannedOutageError) throw new ServiceUnavailableError('redis');
      throw SessionsError.waitTimeout(record.id);
    } finally {
      signal?.removeEventListener('abort', interrupt);
      await unsubscribe?.();
    }
  }

  private dispatch(
    session: SessionRecord,
    record: ExecutionRecord,
    command: ExecutionRequest,
    { stream, onlyDispatch }: { stream: boolean; onlyDispatch: boolean },
    threadRevision: number | undefined,
    admission: ExecutionAdmission,
    admit: boolean,
  ): Promise<ExecutionView> {
    return this.dispatcher.dispatch<typeof JobName.Execute, ExecutionView>(
      session.workerId,
      JobName.Execute,
      {
        session: specOf(session),
        executionId: record.id,
        code: command.code,
        ...(command.process ? { command: command.process } : {}),
        ...(command.process && command.background ? { background: true as const } : {}),
        timeoutMs: record.timeoutMs,
        stream,
        threadRevision,
        recordedAt: new Date(record.createdAt).getTime(),
        ...(onlyDispatch ? { onlyDispatch } : {}),
        ...(admission.hold ? { slot: admission.hold } : {}),
      },
      { waitMs: Math.min(record.timeoutMs + 60_000, this.config.gateway.maxWaitMs), ...(admit && admission.push ? { push: admission.push } : {}) },
    );
  }

  // Records the execution on a session placed on a live worker. Usually one statement
  // reads the session and inserts the execution; a session that is lost, or whose
  // worker is gone, is first moved to a live worker.
  private async record(
    principal: Pick<TenantPrincipal, 'tenantId' | 'limits'>,
    sessionId: string,
    command: ExecutionRequest,
  ): Promise<Recorded> {
    const { tenantId } = principal;
    const draft: SessionExecutionDraft = {
      id: newId('exe'),
      kind: command.process ? 'command' : 'code',
      background: command.process !== undefined && command.background === true,
      code: command.code,
      codeSha256: sha256(command.code),
      idempotencyKey: command.idempotencyKey ?? null,
      requestedTimeoutMs: command.timeoutMs ?? null,
      maxTimeoutMs: tenantCeiling(this.config, principal.limits).timeoutMs,
    };
    const first = await this.repository.findWithNewExecution(tenantId, sessionId, draft);
    if (!first.session) throw SessionsError.notFound(sessionId);
    let placed: SessionRecord;
    try {
      placed = await this.sessions.ensurePlaced(first.session);
    } catch (error) {
      // Nothing was dispatched: leave no queued execution behind.
      if (first.execution?.created) await this.executions.discardQueued(tenantId, first.execution.record.id);
      throw error;
    }
    if (first.execution) return { session: placed, ...first.execution, threadRevision: first.threadRevision };
    // It was lost and is placed again now.
    const second = await this.repository.findWithNewExecution(tenantId, sessionId, draft);
    if (!second.session) throw SessionsError.notFound(sessionId);
    if (second.session.status === 'ended') throw SessionsError.ended(sessionId);
    if (!second.execution) throw SessionsError.noWorker();
    return { session: second.session, ...second.execution, threadRevision: second.threadRevision };
  }

  // The run's fate is unknown and its container is gone with the worker: record it as
  // killed and mark the session lost, so the next run re-creates it on a live worker.
  private async failOnLostWorker(tenantId: string, sessionId: string, executionId: string): Promise<ExecutionView> {
    const killed = await this.executions.completeUnfinished(
      tenantId,
      executionId,
      failedRun({
        status: 'killed',
        name: 'WorkerLost',
        value: 'The worker hosting this session stopped during the run; the next run re-creates the session.',
      }),
    );
    if (killed) {
      await this.sessions.markLost(tenantId, sessionId);
      return toExecutionView(killed);
    }
    // The run recorded its outcome after all: its worker was not gone, the session stays.
    const recorded = await this.executions.findById(tenantId, executionId);
    if (!recorded) throw SessionsError.waitTimeout(executionId);
    return toExecutionView(recorded);
  }

  // Asks the worker of the execution's session to stop it (POST
  // /v1/executions/:id/interrupt): running code gets a KeyboardInterrupt, and one still
  // waiting for its turn never runs. `requested` is false when it had already ended.
  async interrupt(tenantId: string, executionId: string): Promise<{ execution: ExecutionView; requested: boolean }> {
    const record = await this.executions.findById(tenantId, executionId);
    if (!record) throw SessionsError.executionNotFound(executionId);
    if (FINISHED.has(record.status)) return { execution: toExecutionView(record), requested: false };
    // Marked before the session's worker is read: a gateway resending the job after
    // SESSION_MOVED either finds the mark or has placed the session where this reads it.
    await this.dispatcher.markInterrupted(record.id);
    const session = await this.sessions.get(tenantId, record.sessionId);
    if (session.workerId) await this.dispatcher.interrupt(session.workerId, record.id);
    return { execution: toExecutionView(record), requested: true };
  }

  // Interrupts every execution of the session that is running or waiting for its turn
  // (POST /v1/sessions/:id/interrupt, a notebook's interrupt); their ids, oldest first.
  async interruptSession(tenantId: string, sessionId: string): Promise<string[]> {
    // Another tenant's session lists nothing, and its read below answers 404.
    const unfinished = await this.executions.listUnfinished(tenantId, sessionId);
    // Marked before the session's worker is read, as in interrupt().
    await Promise.all(unfinished.map((id) => this.dispatcher.markInterrupted(id)));
    const { workerId } = await this.sessions.get(tenantId, sessionId);
    if (workerId) await Promise.all(unfinished.map((id) => this.dispatcher.interrupt(workerId, id)));
    return unfinished;
  }

  async get(tenantId: string, executionId: string): Promise<ExecutionView> {
    const record = await this.executions.findById(tenantId, executionId);
    if (!record) throw SessionsError.executionNotFound(executionId);
    return toExecutionView(record);
  }
}
