import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG, REDIS, type AppConfig } from '@drydock/core';
import { BatchAdmission } from './batch-admission.js';
import { batchEventsChannel, type BatchEvent } from './batch-events.js';
import type { BatchItemRef, ItemOutcome, StartedItem } from './batch.types.js';
import { BATCHES_REPOSITORY, type BatchesRepository } from './batches.repository.js';
import { failedItem } from './item-outcome.js';

// The worker's record of the items it runs: start (at most maxAttempts runs, only while
// the item is still to run), finish (written once, whatever redelivers the job), and
// what follows an item's end: its event for streaming clients and the tenant's next
// admission.
@Injectable()
export class BatchItemLedger {
  private readonly logger = new Logger(BatchItemLedger.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(BATCHES_REPOSITORY) private readonly batches: BatchesRepository,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly admission: BatchAdmission,
  ) {}

  start(ref: BatchItemRef): Promise<StartedItem | null> {
    return this.batches.start(ref, this.config.worker.id, this.config.batches.maxAttempts);
  }

  runState(ref: BatchItemRef) {
    return this.batches.runState(ref);
  }

  // Returns whether this outcome is the item's record (false: it already had one).
  async finish(ref: BatchItemRef, clientId: string | null, outcome: ItemOutcome): Promise<boolean> {
    const recorded = await this.batches.finish(ref, outcome, this.config.batches.retentionSeconds);
    if (recorded) await this.ended(ref, clientId, outcome.status);
    return recorded;
  }

  // An item that will not run again although it is marked running: its runs were all
  // used by workers that were lost, or its batch was cancelled while its worker was
  // lost. Ends `killed`, with the reason.
  async abandon(ref: BatchItemRef, reason: 'attempts' | 'cancelled', attempts: number): Promise<boolean> {
    const value =
      reason === 'attempts'
        ? `The worker running this item stopped ${attempts} time(s); it is not run again (at most ${this.config.batches.maxAttempts} runs).`
        : 'The batch was cancelled while the worker running this item was lost.';
    return this.finish(ref, null, failedItem(reason === 'attempts' ? 'WorkerLost' : 'Cancelled', value));
  }

  private async ended(ref: BatchItemRef, clientId: string | null, status: ItemOutcome['status']): Promise<void> {
    const event: BatchEvent = { type: 'item', index: ref.index, id: clientId, status };
    await this.redis.publish(batchEventsChannel(ref.batchId), JSON.stringify(event)).catch(() => undefined);
    await this.admission
      .admit(ref.tenantId)
      .catch((error: Error) => this.logger.warn(`admitting items of ${ref.tenantId} failed: ${error.message}`));
  }
}
