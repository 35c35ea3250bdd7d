import { Inject, Injectable, Logger } from '@nestjs/common';
import { Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { APP_CONFIG, createRedis, redisOptions, type AppConfig, repeatedErrorLogger } from '@drydock/core';
import { BATCH_QUEUE, type BatchItemJobData } from '@drydock/execution';
import { BATCH_KILL_CHANNEL, type BatchKillMessage } from '@drydock/batches';
import { BatchItemRunner } from '@drydock/session-host';
import { closeQueueWorker, stopQueueWorker } from './close-queue-worker.js';

// Consumes the shared batch-item queue with this worker's batch slots
// (WORKER_BATCH_CONCURRENCY), apart from its session queue: batch items never take a
// session's place nor wait behind one. BullMQ renews each job's lock while it runs and
// gives the job of a worker that died to another one once the lock lapses
// (BATCH_LOCK_MS), at most BATCH_MAX_ATTEMPTS times. Each job is one
// BatchItemRunner.run; `kill` messages stop this worker's items of a cancelled batch.
@Injectable()
export class BatchItemsProcessor {
  private readonly logger = new Logger(BatchItemsProcessor.name);
  private worker: Worker<BatchItemJobData> | null = null;
  private kills: Redis | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly runner: BatchItemRunner,
  ) {}

  async start(): Promise<void> {
    const { workerConcurrency, lockMs, maxAttempts } = this.config.batches;
    if (workerConcurrency === 0) return;
    this.worker = new Worker<BatchItemJobData>(BATCH_QUEUE, (job) => this.process(job), {
      connection: redisOptions(this.config.redisUrl, 'drydock-worker-batch'),
      concurrency: workerConcurrency,
      lockDuration: lockMs,
      stalledInterval: Math.max(1000, Math.floor(lockMs / 2)),
      maxStalledCount: maxAttempts,
    });
    this.worker.on('failed', (job, error) => this.logger.warn(`batch item ${job?.id} failed: ${error.message}`));
    this.worker.on('error', repeatedErrorLogger(this.logger, `queue ${BATCH_QUEUE}`));
    this.kills = createRedis(this.config.redisUrl, 'drydock-worker-batch-kill');
    this.kills.on('message', (_channel: string, message: string) => this.onKill(message));
    await this.kills.subscribe(BATCH_KILL_CHANNEL);
  }

  async process(job: Job<BatchItemJobData>): Promise<{ recorded: boolean }> {
    return { recorded: await this.runner.run(job.data) };
  }

  // Stops taking items and waits up to `graceMs` for running ones.
  async drain(graceMs: number): Promise<boolean> {
    if (!this.worker) return true;
    const finished = await closeQueueWorker(this.worker, graceMs);
    await this.runner.releaseIdle();
    return finished;
  }

  // A drain out of time: running items are given up unrecorded and run again elsewhere.
  abandon(): number {
    return this.runner.abandonAll();
  }

  async close(): Promise<void> {
    if (this.worker) await stopQueueWorker(this.worker);
    this.worker = null;
    await this.runner.releaseIdle();
    await this.kills?.quit().catch(() => undefined);
    this.kills = null;
  }

  private onKill(message: string): void {
    let kill: BatchKillMessage;
    try {
      kill = JSON.parse(message) as BatchKillMessage;
    } catch {
      return;
    }
    const killed = this.runner.kill(kill.batchId);
    if (killed) this.logger.log(`killed ${killed} running items of cancelled batch ${kill.batchId}`);
  }
}
