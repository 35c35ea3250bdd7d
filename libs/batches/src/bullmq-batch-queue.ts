import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { APP_CONFIG, REDIS, redisOptions, ServiceUnavailableError, type AppConfig, repeatedErrorLogger } from '@drydock/core';
import { BATCH_QUEUE, batchItemJobId, type BatchItemJobData } from '@drydock/execution';
import type { BatchItemRef } from './batch.types.js';
import type { BatchQueue } from './batch-queue.js';

const ADD_CHUNK = 1000;

// BullMQ's side of batch items: one shared queue. BullMQ delivers each job to one live
// worker, renews its lock while it runs and hands it to another worker when that lock
// lapses (a killed worker); attempts bound how often (docs/decisions/009-batches.md).
@Injectable()
export class BullMqBatchQueue implements BatchQueue, OnApplicationShutdown {
  private readonly logger = new Logger(BullMqBatchQueue.name);
  private queue: Queue<BatchItemJobData> | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  async enqueue(items: BatchItemRef[]): Promise<void> {
    // Admitted items whose jobs cannot be added now are queued by the maintenance pass.
    if (this.redis.status !== 'ready') throw new ServiceUnavailableError('redis');
    const queue = this.get();
    for (let i = 0; i < items.length; i += ADD_CHUNK) {
      await queue.addBulk(
        items.slice(i, i + ADD_CHUNK).map((item) => ({
          name: 'item',
          data: { batchId: item.batchId, tenantId: item.tenantId, index: item.index },
          opts: {
            jobId: batchItemJobId(item),
            // Thrown errors are infrastructure failures (the item's own failures are
            // its record): retried like a lost worker, within the item's attempts.
            attempts: this.config.batches.maxAttempts,
            backoff: { type: 'exponential', delay: 1000 },
            removeOnComplete: true,
            removeOnFail: { age: 24 * 3600 },
          },
        })),
      );
    }
  }

  async orphaned<T extends BatchItemRef>(items: T[]): Promise<T[]> {
    const queue = this.get();
    const orphaned: T[] = [];
    for (const item of items) {
      const state = await queue.getJobState(batchItemJobId(item));
      if (state === 'failed' || state === 'completed' || state === 'unknown') orphaned.push(item);
    }
    return orphaned;
  }

  async requeue(items: BatchItemRef[]): Promise<void> {
    const queue = this.get();
    for (const item of items) await queue.remove(batchItemJobId(item)).catch(() => undefined);
    await this.enqueue(items);
  }

  async remove(items: BatchItemRef[]): Promise<void> {
    const queue = this.get();
    await Promise.all(items.map((item) => queue.remove(batchItemJobId(item)).catch(() => undefined)));
  }

  async counts(): Promise<Record<string, number>> {
    return this.get().getJobCounts('waiting', 'active', 'delayed', 'failed');
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue?.close().catch(() => undefined);
    this.queue = null;
  }

  private get(): Queue<BatchItemJobData> {
    if (!this.queue) {
      this.queue = new Queue<BatchItemJobData>(BATCH_QUEUE, { connection: redisOptions(this.config.redisUrl, 'drydock-batch-queue') });
      this.queue.on('error', repeatedErrorLogger(this.logger, `queue ${BATCH_QUEUE}`));
    }
    return this.queue;
  }
}
