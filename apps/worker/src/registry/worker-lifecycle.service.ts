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
import { SESSIONS_REPOSITORY, type SessionsRepository } from '@drydock/sessions';
import { IdleReaper, SessionLifecycle, WorkerHeartbeat } from '@drydock/session-host';
import { BatchItemsProcessor } from '../processors/batch-items.processor.js';
import { SessionJobsProcessor } from '../processors/session-jobs.processor.js';

// Start-up and shut-down order of a worker: clear containers left by a previous life,
// announce itself, take jobs; on the way out, the reverse. The work itself is in
// @drydock/session-host.
@Injectable()
export class WorkerLifecycleService implements OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Worker');
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private reaperTimer: NodeJS.Timeout | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SANDBOX_RUNTIME) private readonly runtime: SandboxRuntime,
    @Inject(SESSIONS_REPOSITORY) private readonly sessions: SessionsRepository,
    private readonly heartbeat: WorkerHeartbeat,
    private readonly reaper: IdleReaper,
    private readonly lifecycle: SessionLifecycle,
    private readonly processor: SessionJobsProcessor,
    private readonly batchItems: BatchItemsProcessor,
    @InjectQueue(MAINTENANCE_QUEUE) private readonly maintenance: Queue,
  ) {}

  async onApplicationBootstrap(): Promise<void> {
    const { id } = this.config.worker;
    const removed = await this.runtime.removeOrphans(id, new Set());
    if (removed) this.logger.log(`removed ${removed} containers left by a previous run of ${id}`);
    await this.heartbeat.beat();
    this.heartbeatTimer = setInterval(() => void this.heartbeat.beat(), this.config.worker.heartbeatMs);
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
    await this.maintenance.upsertJobScheduler(
      MaintenanceJob.BatchMaintenance,
      { every: this.config.batches.maintenanceIntervalMs },
      { name: MaintenanceJob.BatchMaintenance, opts: { removeOnComplete: true, removeOnFail: 100 } },
    );
    this.processor.start();
    await this.batchItems.start();
    this.logger.log(
      `worker ${id} ready (capacity ${this.config.worker.capacity} sessions, ${this.config.batches.workerConcurrency} batch slots)`,
    );
  }

  // Before Nest closes the database and Redis connections this still needs.
  async beforeApplicationShutdown(): Promise<void> {
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.reaperTimer) clearInterval(this.reaperTimer);
    await this.heartbeat.deregister().catch(() => undefined);
    // Let running executions finish within the grace period; then destroying the
    // sandboxes ends whatever still runs (recorded as killed) and the consumer closes.
    const [drained, batchDrained] = await Promise.all([
      this.processor.drain(this.config.worker.shutdownGraceMs),
      this.batchItems.drain(this.config.worker.shutdownGraceMs),
    ]);
    if (!drained) this.logger.warn('stopping with executions still running; they end as killed');
    if (!batchDrained) this.logger.warn('stopping with batch items still running; another worker runs them again');
    await this.lifecycle.shutdown();
    await Promise.all([this.processor.close(), this.batchItems.close()]);
    // The containers are gone; the next run of each session re-creates it elsewhere.
    await this.sessions.markWorkerSessionsLost(this.config.worker.id).catch(() => undefined);
  }

  private async reap(): Promise<void> {
    try {
      const reaped = await this.reaper.reap();
      if (reaped.length) this.logger.log(`reaped ${reaped.length} idle sessions`);
    } catch (error) {
      this.logger.warn(`reaper: ${(error as Error).message}`);
    }
  }
}
