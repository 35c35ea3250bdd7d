import { hostname } from 'node:os';
import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type BeforeApplicationShutdown,
} from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { MAINTENANCE_QUEUE, MaintenanceJob, SANDBOX_RUNTIME, type SandboxRuntime } from '@drydock/execution';
import { SESSIONS_REPOSITORY, WORKER_REGISTRY, type SessionsRepository, type WorkerRegistry } from '@drydock/sessions';
import { SessionJobsProcessor } from '../processors/session-jobs.processor.js';
import { SessionHostService } from '../sessions/session-host.service.js';

// Start-up and shut-down order of a worker: clear containers left by a previous life,
// announce itself, take jobs; on the way out, the reverse.
@Injectable()
export class WorkerLifecycleService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Worker');
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private reaperTimer: NodeJS.Timeout | null = null;
  private readonly startedAt = new Date().toISOString();
  private beating = false;
  private flushing = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SANDBOX_RUNTIME) private readonly runtime: SandboxRuntime,
    @Inject(WORKER_REGISTRY) private readonly registry: WorkerRegistry,
    @Inject(SESSIONS_REPOSITORY) private readonly sessions: SessionsRepository,
    private readonly host: SessionHostService,
    private readonly processor: SessionJobsProcessor,
    @InjectQueue(MAINTENANCE_QUEUE) private readonly maintenance: Queue,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { id } = this.config.worker;
    const removed = await this.runtime.removeOrphans(id, new Set());
    if (removed) this.logger.log(`removed ${removed} containers left by a previous run of ${id}`);
    await this.heartbeat();
    this.heartbeatTimer = setInterval(() => void this.heartbeat(), this.config.worker.heartbeatMs);
    this.reaperTimer = setInterval(() => void this.reap(), this.config.worker.reaperIntervalMs);
    // Every worker upserts the same scheduler: one sweep per period, on any worker.
    await this.maintenance.upsertJobScheduler(
      MaintenanceJob.SweepSessions,
      { every: this.config.worker.reaperIntervalMs },
      { name: MaintenanceJob.SweepSessions, opts: { removeOnComplete: true, removeOnFail: 100 } },
    );
    await this.maintenance.upsertJobScheduler(
      MaintenanceJob.ExpireArtifacts,
      { every: this.config.artifacts.expiryIntervalMs },
      { name: MaintenanceJob.ExpireArtifacts, opts: { removeOnComplete: true, removeOnFail: 100 } },
    );
    this.processor.start();
    this.logger.log(`worker ${id} ready (capacity ${this.config.worker.capacity})`);
  }

  // Before Nest closes the database and Redis connections this still needs.
  async beforeApplicationShutdown(): Promise<void> {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.reaperTimer) clearInterval(this.reaperTimer);
    await this.registry.deregister(this.config.worker.id).catch(() => undefined);
    // Let running executions finish within the grace period; then destroying the
    // sandboxes ends whatever still runs (recorded as killed) and the consumer closes.
    const drained = await this.processor.drain(this.config.worker.shutdownGraceMs);
    if (!drained) this.logger.warn('stopping with executions still running; they end as killed');
    await this.host.shutdown();
    await this.processor.close();
    // The containers are gone; the next run of each session re-creates it elsewhere.
    await this.sessions.markWorkerSessionsLost(this.config.worker.id).catch(() => undefined);
  }

  async reap(): Promise<void> {
    try {
      const reaped = await this.host.reapIdle();
      if (reaped.length) this.logger.log(`reaped ${reaped.length} idle sessions`);
    } catch (error) {
      this.logger.warn(`reaper: ${(error as Error).message}`);
    }
  }

  // One heartbeat, then the session-activity flush. The beat must not wait on anything
  // that can hang: a slow Docker daemon once held it past its TTL and a live worker was
  // declared lost. The daemon gets one heartbeat period to answer (no answer:
  // dockerHealthy false); the flush runs after the beat and on its own, so a slow
  // database delays neither the beat nor the next one; and a beat or a flush still
  // going when the next is due makes that one skip it instead of piling up.
  async heartbeat(): Promise<void> {
    if (!this.beating) {
      this.beating = true;
      try {
        const dockerHealthy = await withTimeout(this.runtime.healthy(this.config.worker.heartbeatMs), this.config.worker.heartbeatMs, false);
        await this.registry.heartbeat(
          {
            id: this.config.worker.id,
            hostname: hostname(),
            capacity: this.config.worker.capacity,
            sessions: this.host.size,
            startedAt: this.startedAt,
            lastSeenAt: new Date().toISOString(),
            dockerHealthy,
          },
          this.config.worker.heartbeatTtlMs,
        );
      } catch (error) {
        this.logger.warn(`heartbeat failed: ${(error as Error).message}`);
      } finally {
        this.beating = false;
      }
    }
    if (!this.flushing) {
      this.flushing = true;
      try {
        await this.host.flushActivity();
      } catch (error) {
        this.logger.warn(`recording session activity failed: ${(error as Error).message}`);
      } finally {
        this.flushing = false;
      }
    }
  }
}

// The promise's value, or `fallback` when it takes longer than `ms` (or fails).
async function withTimeout<T>(promise: Promise<T>, ms: number, fallback: T): Promise<T> {
  let timer: NodeJS.Timeout | undefined;
  const late = new Promise<T>((resolve) => {
    timer = setTimeout(() => resolve(fallback), ms);
  });
  try {
    return await Promise.race([promise.catch(() => fallback), late]);
  } finally {
    clearTimeout(timer);
  }
}
