import { Inject, Logger } from '@nestjs/common';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { ArtifactsService } from '@drydock/artifacts';
import { BatchMaintenance } from '@drydock/batches';
import { APP_CONFIG, repeatedErrorLogger, type AppConfig } from '@drydock/core';
import { EGRESS_LOG_REPOSITORY, type EgressLogRepository } from '@drydock/egress';
import { MAINTENANCE_QUEUE, MaintenanceJob } from '@drydock/execution';
import { AbandonedSessionSweeper } from '@drydock/session-host';
import { TemplateMaintenance } from '@drydock/templates';

// Housekeeping shared by all workers; each scheduled job runs on one of them.
@Processor(MAINTENANCE_QUEUE)
export class MaintenanceProcessor extends WorkerHost {
  constructor(
    private readonly sweeper: AbandonedSessionSweeper,
    private readonly artifacts: ArtifactsService,
    private readonly batches: BatchMaintenance,
    private readonly templates: TemplateMaintenance,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EGRESS_LOG_REPOSITORY) private readonly egressLog: EgressLogRepository,
  ) {
    super();
  }

  // Rows past EGRESS_LOG_RETENTION_DAYS, in bounded deletes.
  private async pruneEgressLog(): Promise<number> {
    const days = this.config.egress.logRetentionDays;
    if (days === 0) return 0;
    const before = new Date(Date.now() - days * 86_400_000);
    let deleted = 0;
    for (let pass = 0; pass < 100; pass++) {
      const n = await this.egressLog.prune(before, 5_000);
      deleted += n;
      if (n < 5_000) break;
    }
    return deleted;
  }

  private readonly logError = repeatedErrorLogger(new Logger(MaintenanceProcessor.name), `queue ${MAINTENANCE_QUEUE}`);

  // Without a listener BullMQ prints each failed reconnect's error with console.error.
  @OnWorkerEvent('error')
  onError(error: Error): void {
    this.logError(error);
  }

  async process(job: Job): Promise<unknown> {
    switch (job.name) {
      case MaintenanceJob.SweepSessions:
        return { ended: await this.sweeper.sweep() };
      case MaintenanceJob.ExpireArtifacts:
        // Retention: expired artifacts go, then the content nothing else references.
        return await this.artifacts.expire();
      case MaintenanceJob.BatchMaintenance:
        // Retention of batches, and items a crash left admitted or running.
        return await this.batches.run();
      case MaintenanceJob.TemplateMaintenance:
        return await this.templates.run();
      case MaintenanceJob.EgressLogRetention:
        return { deleted: await this.pruneEgressLog() };
      default:
        throw new Error(`unknown maintenance job ${job.name}`);
    }
  }
}
