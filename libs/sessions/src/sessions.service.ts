import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, newId, TenantsService, type AppConfig } from '@drydock/core';
import { JOB_DISPATCHER, JobName, type JobDispatcher, type SessionSpec } from '@drydock/execution';
import { resolveLimits, type RequestedLimits } from './session-limits.js';
import { SessionsError } from './sessions.errors.js';
import { SESSIONS_REPOSITORY, type SessionRecord, type SessionsRepository } from './sessions.repository.js';
import type { SessionStorage } from './session.entity.js';
import { pickWorker, WORKER_REGISTRY, type WorkerRegistry } from './worker-registry.js';

export interface CreateSessionCommand {
  threadId?: string;
  limits?: RequestedLimits;
  storage?: SessionStorage;
}

const START_WAIT_MS = 60_000;

@Injectable()
export class SessionsService {
  private readonly logger = new Logger(SessionsService.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SESSIONS_REPOSITORY) private readonly sessions: SessionsRepository,
    @Inject(WORKER_REGISTRY) private readonly workers: WorkerRegistry,
    @Inject(JOB_DISPATCHER) private readonly dispatcher: JobDispatcher,
    private readonly tenants: TenantsService,
  ) {}

  get idleMs(): number {
    return this.config.worker.sessionIdleMs;
  }

  // Creates the thread's session, or returns its live one (`created: false`).
  async create(tenantId: string, command: CreateSessionCommand): Promise<{ session: SessionRecord; created: boolean }> {
    const tenant = await this.tenants.get(tenantId);
    const threadId = command.threadId ?? newId('thr');
    const limits = resolveLimits(this.config, tenant.limits, command.limits);
    const maxSessions = tenant.limits.maxSessions;
    if (maxSessions !== undefined && (await this.sessions.countLive(tenantId)) >= maxSessions) {
      const live = (await this.sessions.list(tenantId, { includeEnded: false, limit: 1000 })).find(
        (s) => s.threadId === threadId,
      );
      if (!live) throw SessionsError.tooManySessions(maxSessions);
    }
    const worker = pickWorker(await this.workers.listLive());
    if (!worker) throw SessionsError.noWorker();
    const { record, created } = await this.sessions.createOrGetLive(tenantId, {
      id: newId('ses'),
      threadId,
      workerId: worker.id,
      limits,
      storage: command.storage ?? 'tmpfs',
    });
    if (!created) return { session: await this.ensurePlaced(record), created: false };
    try {
      await this.dispatcher.dispatch(worker.id, JobName.StartSession, { session: specOf(record) }, { waitMs: START_WAIT_MS });
    } catch (error) {
      await this.sessions.end(tenantId, record.id, 'start-failed');
      this.logger.warn(`session ${record.id} failed to start: ${(error as Error).message}`);
      throw SessionsError.sandboxFailed((error as Error).message);
    }
    return { session: (await this.sessions.findById(tenantId, record.id))!, created: true };
  }

  async get(tenantId: string, sessionId: string): Promise<SessionRecord> {
    const session = await this.sessions.findById(tenantId, sessionId);
    if (!session) throw SessionsError.notFound(sessionId);
    return session;
  }

  list(tenantId: string, includeEnded = false): Promise<SessionRecord[]> {
    return this.sessions.list(tenantId, { includeEnded, limit: 500 });
  }

  async delete(tenantId: string, sessionId: string): Promise<void> {
    const session = await this.get(tenantId, sessionId);
    if (session.status === 'ended') return;
    await this.sessions.end(tenantId, sessionId, 'deleted');
    if (await this.workers.isLive(session.workerId)) {
      await this.dispatcher
        .dispatch(session.workerId, JobName.StopSession, { session: { sessionId, tenantId } }, { waitMs: 30_000 })
        .catch((error: Error) => this.logger.warn(`stop of ${sessionId} failed: ${error.message}`));
    }
  }

  markLost(tenantId: string, sessionId: string): Promise<void> {
    return this.sessions.setStatus(tenantId, sessionId, 'lost');
  }

  // A live session whose worker died is moved to a live worker; the container will be
  // re-created there on the next job and the run will report the lost state.
  async ensurePlaced(session: SessionRecord): Promise<SessionRecord> {
    if (session.status === 'ended') throw SessionsError.ended(session.id);
    if (session.status !== 'lost' && (await this.workers.isLive(session.workerId))) return session;
    const worker = pickWorker(await this.workers.listLive());
    if (!worker) throw SessionsError.noWorker();
    await this.sessions.moveToWorker(session.tenantId, session.id, worker.id);
    this.logger.log(`session ${session.id} moved from ${session.workerId} to ${worker.id}`);
    return (await this.sessions.findById(session.tenantId, session.id))!;
  }
}

export function specOf(session: SessionRecord): SessionSpec {
  return {
    sessionId: session.id,
    tenantId: session.tenantId,
    threadId: session.threadId,
    limits: session.limits,
  };
}
