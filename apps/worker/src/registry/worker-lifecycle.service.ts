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
import { IdleReaper, OrphanContainerSweeper, SessionLifecycle, TEMPLATE_POOL_SYNC_MS, TemplatePools, WorkerHeartbeat } from '@drydock/session-host';
import { TemplateMaintenance } from '@drydock/templates';
import { BatchItemsProcessor } from '../processors/batch-items.processor.js';
import { TemplateBuildsProcessor } from '../processors/template-builds.processor.js';
import { SessionJobsProcessor } from '../processors/session-jobs.processor.js';
import { MaintenanceSchedule } from './maintenance-schedule.js';

// Start-up and shut-down order of a worker: clear containers left by a previous life,
// announce itself, take jobs; on the way out (SIGTERM) or on an operator's request
// (POST /admin/workers/:id/drain), drain. The work itself is in @drydock/session-host.
// Template housekeeping (lost builds, registry purges) runs this often.
const TEMPLATE_MAINTENANCE_MS = 60_000;
const EGRESS_RETENTION_MS = 3_600_000;

@Injectable()
export class WorkerLifecycleService implements OnModuleInit, OnApplicationBootstrap, BeforeApplicationShutdown {
  private readonly logger = new Logger('Worker');
  private readonly schedule: MaintenanceSchedule;
  private heartbeatTimer: NodeJS.Timeout | null = null;
  private reaperTimer: NodeJS.Timeout | null = null;
  private orphanTimer: NodeJS.Timeout | null = null;
  private templatePoolTimer: NodeJS.Timeout | null = null;
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
    private readonly templateBuilds: TemplateBuildsProcessor,
    private readonly templates: TemplateMaintenance,
    private readonly templatePools: TemplatePools,
    @InjectQueue(MAINTENANCE_QUEUE) private readonly maintenance: Queue,
  ) {
    this.schedule = new MaintenanceSchedule(maintenance, {
      [MaintenanceJob.SweepSessions]: config.worker.reaperIntervalMs,
      [MaintenanceJob.ExpireArtifacts]: config.artifacts.expiryIntervalMs,
      [MaintenanceJob.BatchMaintenance]: config.batches.maintenanceIntervalMs,
      [MaintenanceJob.TemplateMaintenance]: TEMPLATE_MAINTENANCE_MS,
      [MaintenanceJob.EgressLogRetention]: EGRESS_RETENTION_MS,
    });
  }

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
    // A failed drain leaves the worker to be stopped; its shutdown still closes it (below).
    this.heartbeat.whenDrainRequested(
      () => void this.drain().catch((error: Error) => this.logger.error(`drain failed: ${error.message}`)),
    );
    await this.heartbeat.beat();
    // Registered first: other workers' orphan sweeps leave a live worker's containers be.
    this.lifecycle.open();
    if (this.config.worker.orphanSweepMs > 0) {
      this.orphanTimer = setInterval(() => void this.sweepOrphans(), this.config.worker.orphanSweepMs);
    }
    this.heartbeatTimer = setInterval(() => void this.heartbeat.beat(), this.config.worker.heartbeatMs);
    await this.templatePools.sync();
    this.templatePoolTimer = setInterval(() => void this.templatePools.sync(), TEMPLATE_POOL_SYNC_MS);
    this.reaperTimer = setInterval(() => void this.reap(), this.config.worker.reaperIntervalMs);
    // Every worker upserts the same schedulers: one run per period, on any worker.
    await this.schedule.ensure();
    await this.processor.start();
    await this.batchItems.start();
    await this.templateBuilds.start();
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
    try {
      await this.heartbeat.setState('draining');
      const [sessionsDone, itemsDone, buildsDone] = await Promise.all([
        this.processor.drain(drainTimeoutMs),
        this.batchItems.drain(drainTimeoutMs),
        this.templateBuilds.drain(drainTimeoutMs),
      ]);
      if (!buildsDone) this.logger.warn('drain timeout: template builds still running were stopped (recorded failed)');
      if (!sessionsDone) this.logger.warn('drain timeout: executions still running end as killed');
      if (!itemsDone) {
        const given = this.batchItems.abandon();
        this.logger.warn(`drain timeout: ${given} batch items still running are given to another worker`);
      }
      // Sessions that can be checkpointed keep their memory across the drain.
      const { hibernated, failed } = await this.lifecycle.hibernateAll(Date.now() + drainTimeoutMs);
      if (hibernated || failed) this.logger.log(`drain: ${hibernated} sessions hibernated, ${failed} could not be`);
    } finally {
      // Whatever failed above (Redis refusing the state change), the sandboxes and the
      // warm pool go: a stopped worker leaves no container, and no channel open to one.
      await this.lifecycle.shutdown();
    }
    const lost = await this.sessions.markWorkerSessionsLost(id).catch((error: Error) => {
      this.logger.warn(`marking sessions lost failed: ${error.message}`);
      return 0;
    });
    const rerouted = await this.processor.rerouteWaiting(this.config.worker.drainSettleMs);
    await this.runtime.removeOrphans(id, new Set()).catch(() => 0);
    await this.heartbeat.setState('drained');
    this.logger.log(`drained: ${lost} sessions handed back, ${rerouted} waiting jobs sent back to their gateways`);
  }

  // SIGTERM: a drain, then the worker leaves the registry. Whatever the drain met (Redis
  // or PostgreSQL down), the timers stop and the processors close: Nest runs the hooks
  // after this one (closing the BullMQ workers and connections) only if it returns.
  async beforeApplicationShutdown(): Promise<void> {
    await this.drain().catch((error: Error) => this.logger.error(`drain failed, closing anyway: ${error.message}`));
    if (this.heartbeatTimer) clearInterval(this.heartbeatTimer);
    if (this.reaperTimer) clearInterval(this.reaperTimer);
    if (this.orphanTimer) clearInterval(this.orphanTimer);
    if (this.templatePoolTimer) clearInterval(this.templatePoolTimer);
    await this.heartbeat.deregister().catch(() => undefined);
    const closed = await Promise.allSettled([this.processor.close(), this.batchItems.close(), this.templateBuilds.close()]);
    for (const result of closed) {
      if (result.status === 'rejected') this.logger.error(`closing a processor failed: ${(result.reason as Error).message}`);
    }
  }

  private async sweepOrphans(): Promise<void> {
    if (this.heartbeat.state !== 'active') return;
    await this.orphans.sweep().catch((error: Error) => this.logger.warn(`orphan sweep: ${error.message}`));
    await this.templates.sweepLocalImages().catch((error: Error) => this.logger.warn(`template image sweep: ${error.message}`));
  }

  private async reap(): Promise<void> {
    if (this.heartbeat.state !== 'active') return;
    try {
      const healed = await this.schedule.heal();
      if (healed.length) this.logger.warn(`maintenance jobs with no next run, scheduled again: ${healed.join(', ')}`);
    } catch (error) {
      this.logger.warn(`maintenance schedule: ${(error as Error).message}`);
    }
    try {
      const { ended, hibernated } = await this.reaper.reap();
      if (ended.length) this.logger.log(`ended ${ended.length} idle sessions`);
      if (hibernated.length) this.logger.log(`hibernated ${hibernated.length} idle sessions`);
    } catch (error) {
      this.logger.warn(`reaper: ${(error as Error).message}`);
    }
  }
}
