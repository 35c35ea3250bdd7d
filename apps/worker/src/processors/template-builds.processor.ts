import { Inject, Injectable, Logger } from '@nestjs/common';
import { Worker, type Job } from 'bullmq';
import { APP_CONFIG, redisOptions, repeatedErrorLogger, type AppConfig } from '@drydock/core';
import { TEMPLATE_BUILD_LOCK_MS, TEMPLATE_BUILD_QUEUE, TemplateBuildRunner, type TemplateBuildJobData } from '@drydock/templates';
import { closeQueueWorker, stopQueueWorker } from './close-queue-worker.js';

// Consumes the shared template-build queue with this worker's build slots
// (WORKER_TEMPLATE_BUILD_CONCURRENCY), apart from its sessions and batch items. A build
// runs once: a worker lost mid-build leaves its version `building`, and the maintenance
// pass fails it (its steps may not be repeatable, and the log says where it stopped).
@Injectable()
export class TemplateBuildsProcessor {
  private readonly logger = new Logger(TemplateBuildsProcessor.name);
  private worker: Worker<TemplateBuildJobData> | null = null;
  private readonly running = new Set<AbortController>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly runner: TemplateBuildRunner,
  ) {}

  async start(): Promise<void> {
    const { workerConcurrency, registry } = this.config.templates;
    if (workerConcurrency === 0 || !registry) return;
    this.worker = new Worker<TemplateBuildJobData>(TEMPLATE_BUILD_QUEUE, (job) => this.process(job), {
      connection: redisOptions(this.config.redisUrl, 'drydock-worker-templates'),
      concurrency: workerConcurrency,
      lockDuration: TEMPLATE_BUILD_LOCK_MS,
      // A build whose lock lapsed is not handed to another worker.
      maxStalledCount: 0,
    });
    this.worker.on('failed', (job, error) => this.logger.warn(`template build ${job?.id} failed: ${error.message}`));
    this.worker.on('error', repeatedErrorLogger(this.logger, `queue ${TEMPLATE_BUILD_QUEUE}`));
  }

  async process(job: Job<TemplateBuildJobData>): Promise<{ status: string }> {
    const stop = new AbortController();
    this.running.add(stop);
    try {
      return { status: await this.runner.run(job.data, stop.signal) };
    } finally {
      this.running.delete(stop);
    }
  }

  // Stops taking builds and waits up to `graceMs` for running ones; those still running
  // then are stopped and recorded failed.
  async drain(graceMs: number): Promise<boolean> {
    if (!this.worker) return true;
    const finished = await closeQueueWorker(this.worker, graceMs);
    if (!finished) {
      for (const stop of this.running) stop.abort(new Error('the worker building it was drained'));
    }
    return finished;
  }

  async close(): Promise<void> {
    for (const stop of this.running) stop.abort(new Error('the worker building it stopped'));
    if (this.worker) await stopQueueWorker(this.worker);
    this.worker = null;
  }
}
