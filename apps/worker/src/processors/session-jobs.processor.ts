import { Inject, Injectable, Logger } from '@nestjs/common';
import { Queue, Worker, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { APP_CONFIG, createRedis, DrydockError, redisOptions, REDIS, runWithLogContext, type AppConfig, repeatedErrorLogger } from '@drydock/core';
import {
  executionInterruptChannel,
  executionInterruptedKey,
  executionStreamChannel,
  type ExecutionInterruptMessage,
  JobName,
  type ExecutionLaneJob,
  toJobError,
  workerQueueName,
  type ExecuteJobData,
  type JobFailureRecord,
  type JobReply,
  type JobReplyRoute,
  type StartSessionJobData,
  type SnapshotSessionJobData,
  type StopSessionJobData,
  type StageDatasetJobData,
  type ProcessOpJobData,
  type OpenTerminalJobData,
} from '@drydock/execution';
import { SessionsError } from '@drydock/sessions';
import { BackgroundProcesses, ExecutionRunner, SessionLifecycle, TerminalRelay } from '@drydock/session-host';
import { PlatformMetrics } from '@drydock/metrics';
import { closeQueueWorker, stopQueueWorker } from './close-queue-worker.js';
import { ExecutionLaneConsumer } from './execution-lane.consumer.js';

// How far the clock that stamps an execution's `recordedAt` (PostgreSQL's) may be ahead
// of this worker's, for the check below: a job recorded up to this long after the
// interrupt subscription was (re)confirmed still has its mark read before it runs.
const CLOCK_SKEW_MARGIN_MS = 10_000;

// What a job is to the handling below, whichever way it came.
interface WorkerJob {
  name: JobName;
  id: string;
  data: unknown;
  // When it was sent (ms since the epoch).
  timestamp: number;
}

// Consumes this worker's own queue and its execution lane (executions,
// docs/decisions/011-execution-lane.md). The queue name includes the worker id, known
// only at run time, which is why this builds a BullMQ Worker itself instead of using the
// static @Processor() decorator. It stays thin: every job is one call into
// @drydock/session-host, and its outcome (a value or a typed error) goes back to the
// gateway waiting for it.
@Injectable()
export class SessionJobsProcessor {
  private readonly logger = new Logger(SessionJobsProcessor.name);
  private worker: Worker | null = null;
  private lane: ExecutionLaneConsumer | null = null;
  private interrupts: Redis | null = null;
  // When the interrupt subscription was last confirmed (this worker's clock).
  private subscribedAt = 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly lifecycle: SessionLifecycle,
    private readonly runner: ExecutionRunner,
    private readonly metrics: PlatformMetrics,
    private readonly processes: BackgroundProcesses,
    private readonly terminals: TerminalRelay,
  ) {}

  async start(): Promise<void> {
    const name = workerQueueName(this.config.worker.id);
    this.worker = new Worker(name, (job) => this.process(job), {
      connection: redisOptions(this.config.redisUrl, 'drydock-worker-jobs'),
      concurrency: this.config.worker.concurrency,
    });
    this.worker.on('failed', (job, error) => this.logger.warn(`job ${job?.name} ${job?.id} failed: ${error.message}`));
    this.worker.on('error', repeatedErrorLogger(this.logger, `queue ${name}`));
    this.interrupts = createRedis(this.config.redisUrl, 'drydock-worker-interrupts');
    this.interrupts.on('message', (_channel: string, message: string) => this.onInterrupt(message));
    this.lane = new ExecutionLaneConsumer(this.redis, this.config.redisUrl, this.config.worker.id, this.config.worker.concurrency, (job) =>
      this.processExecution(job),
    );
    // Subscribed before the first job can run, catching up with interrupts sent to jobs
    // this worker's previous run left in the lane. ioredis resubscribes on its own after
    // a reconnect; the catch-up then runs again for what was sent meanwhile.
    await this.catchUpInterrupts();
    this.interrupts.on('ready', () =>
      void this.catchUpInterrupts().catch((error: Error) => this.logger.warn(`catching up with interrupts failed: ${error.message}`)),
    );
    await this.lane.start();
  }

  private onInterrupt(message: string): void {
    let executionId: unknown;
    try {
      executionId = (JSON.parse(message) as ExecutionInterruptMessage).executionId;
    } catch {
      return;
    }
    if (typeof executionId !== 'string') return;
    this.interrupt(executionId);
  }

  private interrupt(executionId: string): void {
    const stopping = this.runner.interrupt(executionId);
    this.logger.log(`execution ${executionId} interrupted${stopping ? '' : ' (not running here yet: it will not start)'}`);
  }

  // Subscribes (again, after a reconnect), then finds by its mark
  // (executionInterruptedKey) an interrupt published while no one listened, for every
  // execution on this worker's lane. Read once the subscription is confirmed, so no
  // interrupt falls between the two.
  private async catchUpInterrupts(): Promise<void> {
    await this.interrupts?.subscribe(executionInterruptChannel(this.config.worker.id));
    this.subscribedAt = Date.now();
    const ids = (await this.lane?.executionIds()) ?? [];
    if (ids.length === 0) return;
    const marks = await this.redis.mget(ids.map(executionInterruptedKey));
    ids.forEach((id, i) => marks[i] !== null && this.interrupt(id));
  }

  // Holds the executions waiting in the lane (those running go on) until
  // resumeExecutions(); BullMQ's pause does the same for the queue.
  pauseExecutions(): void {
    this.lane?.pause();
  }

  resumeExecutions(): void {
    this.lane?.resume();
  }

  // Stops taking jobs and waits up to `graceMs` for running ones; returns whether they
  // all finished.
  async drain(graceMs: number): Promise<boolean> {
    const [lane, queue] = await Promise.all([
      this.lane?.drain(graceMs) ?? true,
      this.worker ? closeQueueWorker(this.worker, graceMs) : true,
    ]);
    return lane && queue;
  }

  async close(): Promise<void> {
    await Promise.all([this.worker && stopQueueWorker(this.worker), this.lane?.close(), this.interrupts?.quit().catch(() => undefined)]);
    this.worker = null;
    this.lane = null;
    this.interrupts = null;
  }

  // After a drain handed this worker's sessions back: jobs still waiting in its queue
  // (sent before their gateway saw the session move) are answered SESSION_MOVED, which
  // makes the gateway place the session again and resend. Repeats until the queue has
  // stayed empty for `settleMs` (gateways' view of sessions is that fresh).
  async rerouteWaiting(settleMs: number): Promise<number> {
    const queue = new Queue(workerQueueName(this.config.worker.id), {
      connection: redisOptions(this.config.redisUrl, 'drydock-worker-reroute'),
    });
    const moved = (sessionId: string | undefined) => toJobError(SessionsError.moved(sessionId ?? 'unknown'));
    let rerouted = 0;
    try {
      let quietSince = Date.now();
      while (Date.now() - quietSince < settleMs) {
        const jobs = await queue.getJobs(['waiting', 'prioritized', 'delayed'], 0, 99);
        for (const job of jobs) {
          const { replyTo, session } = job.data as JobReplyRoute & { session?: { sessionId: string } };
          if (replyTo) this.reply(replyTo, { jobId: job.id!, ok: false, error: moved(session?.sessionId) });
          await job.remove().catch(() => undefined);
          rerouted++;
        }
        const executions = (await this.lane?.answerWaiting((job) => ({ ok: false, error: moved(job.session.sessionId) }))) ?? 0;
        rerouted += executions;
        if (jobs.length || executions) quietSince = Date.now();
        else await new Promise((resolve) => setTimeout(resolve, 100));
      }
    } finally {
      await queue.close();
    }
    return rerouted;
  }

  // A job of the queue: its outcome is published to the gateway waiting for it (one
  // PUBLISH, before BullMQ's own bookkeeping); the return value still goes to BullMQ as
  // usual. A failure travels typed ({code, status, message, details}): on the reply
  // channel, and in the job's data for a gateway that missed the reply.
  async process(job: Job): Promise<unknown> {
    const { replyTo } = job.data as JobReplyRoute;
    const reply = await this.inContext({ name: job.name as JobName, id: job.id!, data: job.data, timestamp: job.timestamp });
    if (replyTo) this.reply(replyTo, reply);
    if (reply.ok) return reply.value;
    const record: JobFailureRecord = { failure: reply.error };
    await job.updateData({ ...job.data, ...record }).catch(() => undefined);
    throw new Error(reply.error.message);
  }

  // An execution from the lane; the lane publishes the reply.
  processExecution(job: ExecutionLaneJob): Promise<JobReply> {
    const run = () => this.inContext({ name: JobName.Execute, id: job.jobId, data: job, timestamp: job.enqueuedAt });
    return this.mayHaveMissedInterrupt(job) ? this.readMark(job.executionId).then(run) : run();
  }

  // The catch-up reads the marks of the jobs on the lane when the subscription is
  // confirmed; a job recorded before then but pushed after that read (its gateway
  // between the insert and the push, or slow) could have had its interrupt published
  // while no one listened. Such a job has its mark read before it runs: one GET, only
  // for jobs recorded before the last (re)subscription, which in steady running are
  // none (they run without waiting for anything).
  private mayHaveMissedInterrupt(job: ExecutionLaneJob): boolean {
    return job.recordedAt !== undefined && job.recordedAt <= this.subscribedAt + CLOCK_SKEW_MARGIN_MS;
  }

  // Interrupts the execution if it is marked; a failed read runs it, as before the check.
  private async readMark(executionId: string): Promise<void> {
    const mark = await this.redis.get(executionInterruptedKey(executionId)).catch(() => null);
    if (mark !== null) this.interrupt(executionId);
  }

  // Every line logged for the job carries the request that sent it and its ids.
  private inContext(job: WorkerJob): Promise<JobReply> {
    const { requestId, session, executionId } = job.data as JobReplyRoute & { session?: { tenantId?: string; sessionId?: string }; executionId?: string };
    return runWithLogContext({ requestId, tenantId: session?.tenantId, sessionId: session?.sessionId, executionId }, () => this.settle(job));
  }

  // Runs the job; its outcome as a reply, never a rejection.
  private async settle(job: WorkerJob): Promise<JobReply> {
    const started = performance.now();
    if (job.name === JobName.Execute) this.metrics.stageSeconds.observe({ stage: 'queue_wait' }, Math.max(0, Date.now() - job.timestamp) / 1000);
    try {
      const value = await this.handle(job);
      this.logger.debug(`job ${job.name} ${job.id} done in ${Math.round(performance.now() - started)} ms`);
      return { jobId: job.id, ok: true, value };
    } catch (error) {
      if (!(error instanceof DrydockError)) {
        this.logger.error(`job ${job.name} ${job.id}: ${(error as Error).stack ?? String(error)}`);
      }
      return { jobId: job.id, ok: false, error: toJobError(error) };
    }
  }

  // Best effort: a reply the gateway misses is found by its periodic check of the job.
  private reply(channel: string, reply: JobReply): void {
    void this.redis.publish(channel, JSON.stringify(reply)).catch((error: Error) =>
      this.logger.warn(`replying for job ${reply.jobId} failed: ${error.message}`),
    );
  }

  private handle(job: WorkerJob): Promise<unknown> {
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
      case JobName.SnapshotSession:
        return this.lifecycle.snapshot(job.data as SnapshotSessionJobData);
      case JobName.HibernateSession:
        return this.lifecycle.hibernate((job.data as StartSessionJobData).session);
      case JobName.StopSession:
        return this.lifecycle.stop((job.data as StopSessionJobData).session.sessionId);
      case JobName.ProcessOp:
        return this.processes.handle(job.data as ProcessOpJobData);
      case JobName.OpenTerminal:
        return this.terminals.open(job.data as OpenTerminalJobData);
      default:
        throw new Error(`unknown job ${job.name}`);
    }
  }
}
