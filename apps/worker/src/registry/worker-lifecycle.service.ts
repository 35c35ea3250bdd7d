import {
  Inject,
  Injectable,
  Logger,
  type OnApplicationBootstrap,
  type OnModuleInit,
  type BeforeApplicationShutdown,
} from '@nestjs/common';
import { InjectQueue } from '@nestjs/bullmq';
import type { Queue } from 'bullmq';
import { APP_CONFIG, type AppConfig, repeatedErrorLogger } from '@drydock/core';
import { MAINTENANCE_QUEUE, MaintenanceJob, SANDBOX_RUNTIME, type SandboxRuntime } from '@drydock/execution';
import { SESSIONS_REPOSITORY, WORKER_REGISTRY, type SessionsRepository, type WorkerRegistry } from '@drydock/sessions';
import { IdleReaper, OrphanContainerSweeper, SessionLifecycle, WorkerHeartbeat } from '@drydock/session-host';
import { BatchItemsProcessor } from '../processors/batch-items.processor.js';
import { SessionJobsProcessor } from '../processors/session-jobs.processor.js';

// Start-up and shut-down order of a worker: clear containers left by a previous life,
// announce itself, take jobs; on the way out (SIGTERM) or on an operator's request
// (POST /admin/workers/:id/drain), drain. The work itself is in @drydock/session-host.
@Injectable()
export class WorkerLifecycleService implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Worker');
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private reaperTimer: NodeJS.Timeout | null = null;
  private orphanTimer: NodeJS.Timeout | null = null;
  private draining: Promise<void> | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SANDBOX_RUNTIME) private readonly runtime: SandboxRuntime,
    @Inject(SESSIONS_REPOSITORY) private readonly sessions: SessionsRepository,
    @Inject(WORKER_REGISTRY) private readonly registry: WorkerRegistry,
    private readonly heartbeat: WorkerHeartbeat,
    private readonly reaper: IdleReaper,
    private readonly orphans: OrphanContainerSweeper,
    private readonly lifecycle: SessionLifecycle,
    private readonly processor: SessionJobsProcessor,
    private readonly batchItems: BatchItemsProcessor,
    @InjectQueue(MAINTENANCE_QUEUE) private readonly maintenance: Queue,
  ) {}

  onModuleInit(): void {
    // Without a listener BullMQ prints each failed reconnect's error with console.error.
    this.maintenance.on('error', repeatedErrorLogger(this.logger, `queue ${MAINTENANCE_QUEUE}`));
  }

  async onApplicationBootstrap(): Promise<void> {
    const { id } = this.config.worker;
    const removed = await this.runtime.removeOrphans(id, new Set());
    if (removed) this.logger.log(`removed ${removed} containers left by a previous run of ${id}`);
    // A drain requested of this worker's previous life is over: it starts afresh.
    await this.registry.clearDrainRequest(id);
    this.heartbeat.whenDrainRequested(() => void this.drain());
    await this.heartbeat.beat();
    // Registered first: other workers' orphan sweeps leave a live worker's containers be.
    this.lifecycle.open();
    if (this.config.worker.orphanSweepMs > 0) {
      this.orphanTimer = setInterval(() => void this.sweepOrphans(), this.config.worker.orphanSweepMs);
    }
    this.heartbeatTimer = setInterval(() => void this.heartbeat.beat(), this.config.worker.heartbeatMs);
    this.reaperTimer = setInterval(() => void this.reap(), this.config.worker.reaperIntervalMs);
    // Every worker upserts the same schedulers: one run per period, on any worker.
    for (const [name, every] of [
      [MaintenanceJob.SweepSessions, this.config.worker.reaperIntervalMs],
      [MaintenanceJob.ExpireArtifacts, this.config.artifacts.expiryIntervalMs],
      [MaintenanceJob.BatchMaintenance, this.config.batches.maintenanceIntervalMs],
    ] as const) {
      await this.maintenance.upsertJobScheduler(name, { every }, { name, opts: { removeOnComplete: true, removeOnFail: 100 } });
    }
    await this.processor.start();
    await this.batchItems.start();
    this.logger.log(
      `worker ${id} ready (capacity ${this.config.worker.capacity} sessions, ${this.config.batches.workerConcurrency} batch slots)`,
    );
  }

  // Stops taking sessions and batch items, lets running executions and items finish
  // (within WORKER_DRAIN_TIMEOUT_MS), hands the sessions back (marked lost: their next
  // run re-creates them on another worker with their files), sends jobs that still
  // arrive back to their gateways, and removes its containers. The worker stays up,
  // `drained`, until it is stopped. Once per life.
  drain(): Promise<void> {
    this.draining ??= this.runDrain();
    return this.draining;
  }

  private async runDrain(): Promise<void> {
    const { id, drainTimeoutMs } = this.config.worker;
    this.logger.log(`draining (up to ${drainTimeoutMs} ms for running work)`);
    await this.heartbeat.setState('draining');
    const [sessionsDone, itemsDone] = await Promise.all([
      this.processor.drain(drainTimeoutMs),
      this.batchItems.drain(drainTimeoutMs),
    ]);
    if (!sessionsDone) this.logger.warn('drain timeout: executions still running end as killed');
    if (!itemsDone) {
      const given = this.batchItems.abandon();
      this.logger.warn(`drain timeout: ${given} batch items still running are given to another worker`);
    }
    await this.lifecycle.shutdown();
    const lost = await this.sessions.markWorkerSessionsLost(id).catch((error: Error) => {
      this.logger.warn(`marking sessions lost failed: ${error.message}`);
      return 0;
    });
    const rerouted = await this.processor.rerouteWaiting(this.config.worker.drainSettleMs);
    await this.runtime.removeOrphans(id, new Set()).catch(() => 0);
    await this.heartbeat.setState('drained');
    this.logger.log(`drained: ${lost} sessions handed back, ${rerouted} waiting jobs sent back to their gateways`);
  }

  // SIGTERM: a drain, then the worker leaves the registry.
  async beforeApplicationShutdown(): Promise<void> {
    await this.drain();
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.reaperTimer) clearInterval(this.reaperTimer);
    if (this.orphanTimer) clearInterval(this.orphanTimer);
    await this.heartbeat.deregister().catch(() => undefined);
    await Promise.all([this.processor.close(), this.batchItems.close()]);
  }

  private async sweepOrphans(): Promise<void> {
    if (this.heartbeat.state !== 'active') return;
    await this.orphans.sweep().catch((error: Error) => this.logger.warn(`orphan sweep: ${error.message}`));
  }

  private async reap(): Promise<void> {
    if (this.heartbeat.state !== 'active') return;
    try {
      const reaped = await this.reaper.reap();
      if (reaped.length) this.logger.log(`reaped ${reaped.length} idle sessions`);
    } catch (error) {
      this.logger.warn(`reaper: ${(error as Error).message}`);
    }
  }
}
