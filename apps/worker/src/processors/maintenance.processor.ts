import { Logger } from '@nestjs/common';
import { OnWorkerEvent, Processor, WorkerHost } from '@nestjs/bullmq';
import type { Job } from 'bullmq';
import { ArtifactsService } from '@drydock/artifacts';
import { BatchMaintenance } from '@drydock/batches';
import { repeatedErrorLogger } from '@drydock/core';
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
  ) {
    super();
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
      default:
        throw new Error(`unknown maintenance job ${job.name}`);
    }
  }
}
