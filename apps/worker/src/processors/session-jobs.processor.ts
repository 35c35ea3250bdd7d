import { Inject, Injectable, Logger } from '@nestjs/common';
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { APP_CONFIG, DrydockError, redisOptions, REDIS, runWithLogContext, type AppConfig } from '@drydock/core';
import {
  executionStreamChannel,
  JobName,
  toJobError,
  workerQueueName,
  type ExecuteJobData,
  type JobFailureRecord,
  type JobReply,
  type JobReplyRoute,
  type StartSessionJobData,
  type StopSessionJobData,
  type StageDatasetJobData,
} from '@drydock/execution';
import { SessionsError } from '@drydock/sessions';
import { ExecutionRunner, SessionLifecycle } from '@drydock/session-host';
import { PlatformMetrics } from '@drydock/metrics';
import { closeQueueWorker, stopQueueWorker } from './close-queue-worker.js';

// Consumes this worker's own queue. The queue name includes the worker id, known only
// at run time, which is why this builds a BullMQ Worker itself instead of using the
// static @Processor() decorator. It stays thin: every job is one call into
// @drydock/session-host, and its outcome (a value or a typed error) goes back to the
// gateway waiting for it.
@Injectable()
export class SessionJobsProcessor {
  private readonly logger = new Logger(SessionJobsProcessor.name);
  private worker: Worker | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly lifecycle: SessionLifecycle,
    private readonly runner: ExecutionRunner,
    private readonly metrics: PlatformMetrics,
  ) {}

  start(): void {
    const name = workerQueueName(this.config.worker.id);
    this.worker = new Worker(name, (job) => this.process(job), {
      connection: redisOptions(this.config.redisUrl, 'drydock-worker-jobs'),
      concurrency: this.config.worker.concurrency,
    });
    this.worker.on('failed', (job, error) => this.logger.warn(`job ${job?.name} ${job?.id} failed: ${error.message}`));
    this.worker.on('error', (error) => this.logger.error(`queue ${name}: ${error.message}`));
  }

  // Stops taking jobs and waits up to `graceMs` for running ones; returns whether they
  // all finished.
  async drain(graceMs: number): Promise<boolean> {
    return this.worker ? closeQueueWorker(this.worker, graceMs) : true;
  }

  async close(): Promise<void> {
    if (this.worker) await stopQueueWorker(this.worker);
    this.worker = null;
  }

  // After a drain handed this worker's sessions back: jobs still waiting in its queue
  // (sent before their gateway saw the session move) are answered SESSION_MOVED, which
  // makes the gateway place the session again and resend. Repeats until the queue has
  // stayed empty for `settleMs` (gateways' view of sessions is that fresh).
  async rerouteWaiting(settleMs: number): Promise<number> {
    const queue = new Queue(workerQueueName(this.config.worker.id), {
      connection: redisOptions(this.config.redisUrl, 'drydock-worker-reroute'),
    });
    let rerouted = 0;
    try {
      let quietSince = Date.now();
      while (Date.now() - quietSince < settleMs) {
        const jobs = await queue.getJobs(['waiting', 'prioritized', 'delayed'], 0, 99);
        for (const job of jobs) {
          const { replyTo, session } = job.data as JobReplyRoute & { session?: { sessionId: string } };
          const failure = toJobError(SessionsError.moved(session?.sessionId ?? 'unknown'));
          if (replyTo) this.reply(replyTo, { jobId: job.id!, ok: false, error: failure });
          await job.remove().catch(() => undefined);
          rerouted++;
        }
        if (jobs.length) quietSince = Date.now();
        else await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await queue.close();
    }
    return rerouted;
  }

  // Runs the job and publishes its outcome to the gateway waiting for it (one PUBLISH,
  // before BullMQ's own bookkeeping); the return value still goes to BullMQ as usual.
  // A failure travels typed ({code, status, message, details}): on the reply channel,
  // and in the job's data for a gateway that missed the reply.
  async process(job: Job): Promise<unknown> {
    const { requestId, session, executionId } = job.data as JobReplyRoute & { session?: { tenantId?: string; sessionId?: string }; executionId?: string };
    // Every line logged for this job carries the request that sent it and its ids.
    return runWithLogContext({ requestId, tenantId: session?.tenantId, sessionId: session?.sessionId, executionId }, () => this.processInContext(job));
  }

  private async processInContext(job: Job): Promise<unknown> {
    const { replyTo } = job.data as JobReplyRoute;
    const started = performance.now();
    if (job.name === JobName.Execute) this.metrics.stageSeconds.observe({ stage: 'queue_wait' }, Math.max(0, Date.now() - job.timestamp) / 1000);
    try {
      const value = await this.handle(job);
      this.logger.debug(`job ${job.name} ${job.id} done in ${Math.round(performance.now() - started)} ms`);
      if (replyTo) this.reply(replyTo, { jobId: job.id!, ok: true, value });
      // An execution's job is removed as it completes and its result is its record:
      // BullMQ gets a summary, not the whole output to copy into its event stream.
      if (job.name === JobName.Execute) {
        const { id, status } = value as { id: string; status: string };
        return { id, status };
      }
      return value;
    } catch (error) {
      const failure = toJobError(error);
      if (!(error instanceof DrydockError)) {
        this.logger.error(`job ${job.name} ${job.id}: ${(error as Error).stack ?? String(error)}`);
      }
      if (replyTo) this.reply(replyTo, { jobId: job.id!, ok: false, error: failure });
      const record: JobFailureRecord = { failure };
      await job.updateData({ ...job.data, ...record }).catch(() => undefined);
      throw error;
    }
  }

  // Best effort: a reply the gateway misses is found by its periodic check of the job
  // (and, for an execution, in PostgreSQL).
  private reply(channel: string, reply: JobReply): void {
    void this.redis.publish(channel, JSON.stringify(reply)).catch((error: Error) =>
      this.logger.warn(`replying for job ${reply.jobId} failed: ${error.message}`),
    );
  }

  private handle(job: Job): Promise<unknown> {
    switch (job.name) {
      case JobName.StartSession:
        return this.lifecycle.start((job.data as StartSessionJobData).session);
      case JobName.Execute: {
        const data = job.data as ExecuteJobData;
        // Output chunks are published only when someone relays them (SSE, a streaming
        // caller); the finished record carries the whole output anyway.
        if (data.stream === false) return this.runner.execute(data);
        const channel = executionStreamChannel(data.executionId);
        return this.runner.execute(data, (name, text) => {
          void this.redis.publish(channel, JSON.stringify({ name, text })).catch(() => undefined);
        });
      }
      case JobName.StageDataset:
        return this.lifecycle.stageDataset(job.data as StageDatasetJobData);
      case JobName.StopSession:
        return this.lifecycle.stop((job.data as StopSessionJobData).session.sessionId);
      default:
        throw new Error(`unknown job ${job.name}`);
    }
  }
}
