import { createHash } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, newId, type AppConfig, type TenantPrincipal } from '@drydock/core';
import {
  EXECUTIONS_REPOSITORY,
  JOB_DISPATCHER,
  JobName,
  toExecutionView,
  type ExecutionsRepository,
  type ExecutionView,
  type JobDispatcher,
  type StreamEvent,
  WorkerLostError,
} from '@drydock/execution';
import { tenantCeiling } from './session-limits.js';
import { SessionsError } from './sessions.errors.js';
import { SessionsService, specOf } from './sessions.service.js';

export interface ExecuteCommand {
  code: string;
  timeoutMs?: number;
  idempotencyKey?: string;
}

const FINISHED = new Set(['ok', 'error', 'timeout', 'memory', 'killed']);

// The hot path on the gateway side: record the execution, hand it to the worker that
// owns the session, wait for (and optionally relay) its output.
@Injectable()
export class SessionExecutionsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EXECUTIONS_REPOSITORY) private readonly executions: ExecutionsRepository,
    @Inject(JOB_DISPATCHER) private readonly dispatcher: JobDispatcher,
    private readonly sessions: SessionsService,
  ) {}

  async execute(
    principal: Pick<TenantPrincipal, 'tenantId' | 'limits'>,
    sessionId: string,
    command: ExecuteCommand,
    onOutput?: (event: StreamEvent) => void,
  ): Promise<ExecutionView> {
    const { tenantId } = principal;
    const session = await this.sessions.ensurePlaced(await this.sessions.get(tenantId, sessionId));
    const ceiling = tenantCeiling(this.config, principal.limits).timeoutMs;
    const timeoutMs = Math.min(command.timeoutMs ?? session.limits.timeoutMs, ceiling);
    const codeSha256 = createHash('sha256').update(command.code, 'utf8').digest('hex');

    const { record, created } = await this.executions.createOrGet(tenantId, {
      id: newId('exe'),
      sessionId: session.id,
      threadId: session.threadId,
      code: command.code,
      codeSha256,
      timeoutMs,
      idempotencyKey: command.idempotencyKey ?? null,
    });
    if (!created) {
      if (record.sessionId !== session.id || record.codeSha256 !== codeSha256) {
        throw SessionsError.idempotencyConflict(command.idempotencyKey!);
      }
      if (FINISHED.has(record.status)) return toExecutionView(record);
    }

    const unsubscribe = onOutput ? await this.dispatcher.subscribeOutput(record.id, onOutput) : undefined;
    try {
      return await this.dispatcher.dispatch<typeof JobName.Execute, ExecutionView>(
        session.workerId,
        JobName.Execute,
        { session: specOf(session), executionId: record.id, code: command.code, timeoutMs },
        { waitMs: Math.min(timeoutMs + 60_000, this.config.gateway.maxWaitMs) },
      );
    } catch (error) {
      if (error instanceof SessionsError) throw error;
      if (error instanceof WorkerLostError) return this.failOnLostWorker(tenantId, session.id, record.id);
      const latest = await this.executions.findById(tenantId, record.id);
      if (latest && FINISHED.has(latest.status)) return toExecutionView(latest);
      throw SessionsError.waitTimeout(record.id);
    } finally {
      await unsubscribe?.();
    }
  }

  // The run's fate is unknown and its container is gone with the worker: record it as
  // killed and mark the session lost, so the next run re-creates it on a live worker.
  private async failOnLostWorker(tenantId: string, sessionId: string, executionId: string): Promise<ExecutionView> {
    await this.sessions.markLost(tenantId, sessionId);
    const record = await this.executions.complete(tenantId, executionId, {
      status: 'killed',
      stdout: '',
      stderr: '',
      truncated: false,
      result: null,
      error: {
        name: 'WorkerLost',
        value: 'The worker hosting this session stopped during the run; the next run re-creates the session.',
        traceback: '',
      },
      stateLost: false,
      files: { changed: [], deleted: [], skipped: [] },
      artifacts: [],
      artifactsSkipped: [],
      durationMs: 0,
    });
    return toExecutionView(record);
  }

  async get(tenantId: string, executionId: string): Promise<ExecutionView> {
    const record = await this.executions.findById(tenantId, executionId);
    if (!record) throw SessionsError.executionNotFound(executionId);
    return toExecutionView(record);
  }
}
