import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { BatchAdmission } from './batch-admission.js';
import { BatchItemLedger } from './batch-item-ledger.js';
import { BATCH_RUN_QUEUE, type BatchQueue } from './batch-queue.js';
import { BATCHES_REPOSITORY, type BatchesRepository } from './batches.repository.js';

const PASS_LIMIT = 1000;

export interface BatchMaintenanceReport {
  expired: number;
  requeued: number;
  abandoned: number;
  admitted: number;
}

// One pass of the batch housekeeping, run by one worker per period (a job scheduler on
// the maintenance queue): retention, and whatever a crash left half-done. BullMQ
// already hands the item of a killed worker to another one when its lock lapses; this
// pass covers the rest: an admitted item whose job was never added (the process died
// between the two), an item whose job BullMQ gave up on (it is queued again, or ends
// killed once it used its runs), and a tenant whose next admission was missed.
@Injectable()
export class BatchMaintenance {
  private readonly logger = new Logger(BatchMaintenance.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(BATCHES_REPOSITORY) private readonly batches: BatchesRepository,
    @Inject(BATCH_RUN_QUEUE) private readonly queue: BatchQueue,
    private readonly admission: BatchAdmission,
    private readonly ledger: BatchItemLedger,
  ) {}

  async run(now = new Date()): Promise<BatchMaintenanceReport> {
    const report: BatchMaintenanceReport = { expired: 0, requeued: 0, abandoned: 0, admitted: 0 };
    report.expired = await this.batches.deleteExpired(now, PASS_LIMIT);

    // Two lock periods: BullMQ has had time to give a lost worker's job to another.
    const before = new Date(now.getTime() - 2 * this.config.batches.lockMs);
    const admitted = await this.queue.orphaned(await this.batches.strandedAdmitted(before, PASS_LIMIT));
    await this.queue.requeue(admitted);
    report.requeued += admitted.length;

    const retry = [];
    for (const item of await this.queue.orphaned(await this.batches.strandedRunning(before, PASS_LIMIT))) {
      if (item.attempts >= this.config.batches.maxAttempts) {
        if (await this.ledger.abandon(item, 'attempts', item.attempts)) report.abandoned++;
      } else {
        retry.push(item);
      }
    }
    await this.queue.requeue(retry);
    report.requeued += retry.length;

    for (const tenantId of await this.batches.tenantsWaiting(PASS_LIMIT)) {
      report.admitted += await this.admission.admit(tenantId).catch((error: Error) => {
        this.logger.warn(`admitting items of ${tenantId} failed: ${error.message}`);
        return 0;
      });
    }
    return report;
  }
}
