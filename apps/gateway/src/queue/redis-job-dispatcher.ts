import { randomBytes, randomUUID } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Job, Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { APP_CONFIG, createRedis, logContext, REDIS, redisOptions, ServiceUnavailableError, type AppConfig, repeatedErrorLogger } from '@drydock/core';
import {
  executionLaneActiveKey,
  executionLaneKey,
  executionOutcomeKey,
  executionStreamChannel,
  fromJobError,
  isJobError,
  executionInterruptChannel,
  executionInterruptedKey,
  jobIdFor,
  jobReplyChannel,
  JobName,
  workerQueueName,
  type ExecuteJobData,
  type ExecutionInterruptMessage,
  type ExecutionLaneJob,
  type ExecutionOutcome,
  type JobDataByName,
  type JobDispatcher,
  type JobFailureRecord,
  type JobReply,
  type JobReplyRoute,
  type StreamEvent,
  WaitSpannedOutageError,
  WorkerLostError,
} from '@drydock/execution';
import { WORKER_REGISTRY, type WorkerRegistry } from '@drydock/sessions';

interface WorkerChannel {
  queue: Queue;
  ready: Promise<unknown>;
}

interface Waiter {
  settle(reply: JobReply): void;
}

// Completed jobs are kept this long, so a gateway that missed a reply still finds the
// result on the job.
const KEEP_COMPLETED_S = 600;

// What the periodic looks at one waited-on job have seen so far, in a row: the job
// nowhere (`misses`), its worker's heartbeat missing (`workerMissing`).
interface Seen {
  misses: number;
  workerMissing: number;
}

// How a periodic look at a waited-on job ends the wait, if it does: the job's outcome
// as a reply, or an error.
type Check = (seen: Seen) => Promise<JobReply | Error | null>;

// The dispatch port over Redis: executions on each worker's execution lane (a list,
// docs/decisions/011-execution-lane.md), the other jobs on its BullMQ queue, created on
// first use. Results come back on this gateway's own reply channel (Redis pub/sub), as
// does live output; no QueueEvents stream is read (docs/decisions/003-per-worker-queues.md).
@Injectable()
export class RedisJobDispatcher implements JobDispatcher, OnApplicationShutdown {
  private readonly logger = new Logger(RedisJobDispatcher.name);
  private readonly channels = new Map<string, WorkerChannel>();
  private readonly replyChannel = jobReplyChannel(randomBytes(9).toString('base64url'));
  private subscriber: Redis | null = null;
  private replies: Promise<unknown> | null = null;
  private readonly listeners = new Map<string, Set<(message: unknown) => void>>();
  // jobId → the waits for it (a retried request can wait on a job already waited on).
  private readonly waiters = new Map<string, Set<Waiter>>();
  private readonly pending = new Set<() => void>();
  // How often the gateway's Redis connection closed (counted from the first wait on).
  private outages = 0;
  private countingOutages = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WORKER_REGISTRY) private readonly workers: WorkerRegistry,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  private outageCount(): number {
    if (!this.countingOutages) {
      this.countingOutages = true;
      this.redis.on('close', () => this.outages++);
    }
    return this.outages;
  }

  async dispatch<N extends JobName, R>(
    workerId: string,
    name: N,
    data: JobDataByName[N],
    options: { waitMs: number; push?: (lane: string, payload: string) => Promise<void> },
  ): Promise<R> {
    // BullMQ's connections wait for Redis to come back, however long; a request should
    // not. The gateway's own client tells whether Redis answers right now.
    if (this.redis.status !== 'ready') throw new ServiceUnavailableError('redis');
    if (name === JobName.Execute) return this.dispatchExecution<R>(workerId, data as ExecuteJobData, options.waitMs, options.push);
    const channel = this.channel(workerId);
    await Promise.all([channel.ready, this.listenForReplies()]);
    const jobId = jobIdFor(name, data);
    const payload: JobDataByName[N] & JobReplyRoute = { ...data, replyTo: this.replyChannel, requestId: logContext()?.requestId };
    return this.waitFor<R>(
      jobId,
      options.waitMs,
      () =>
        channel.queue.add(name, payload, {
          jobId,
          attempts: 1,
          removeOnComplete: { age: KEEP_COMPLETED_S },
          removeOnFail: { age: 24 * 3600 },
        }),
      (seen) => this.checkJob(channel.queue, jobId, workerId, seen),
    );
  }

  // An execution: one LPUSH onto its worker's lane, or the caller's push (its admission
  // and the LPUSH in one script).
  private async dispatchExecution<R>(
    workerId: string,
    data: ExecuteJobData,
    waitMs: number,
    push: (lane: string, payload: string) => Promise<void> = (lane, payload) => this.redis.lpush(lane, payload).then(() => undefined),
  ): Promise<R> {
    await this.listenForReplies();
    const job: ExecutionLaneJob = {
      ...data,
      jobId: jobIdFor(JobName.Execute, data),
      dispatchId: randomUUID(),
      enqueuedAt: Date.now(),
      replyTo: this.replyChannel,
      requestId: logContext()?.requestId,
    };
    const payload = JSON.stringify(job);
    return this.waitFor<R>(
      job.jobId,
      waitMs,
      () => push(executionLaneKey(workerId), payload),
      (seen) => this.checkExecution(workerId, job, payload, seen),
    );
  }

  // Waits for the job's reply, for at most `waitMs`. The wait is registered before the
  // job is added, since the reply may arrive before the add returns. Every heartbeat
  // period it checks the worker's heartbeat (a dead worker never takes the job) and the
  // job itself (a reply lost while the subscriber reconnected, a job BullMQ failed
  // without running it). Every timer and listener is released when the wait ends, and
  // pending waits end on shutdown.
  private waitFor<R>(jobId: string, waitMs: number, add: () => Promise<unknown>, check: Check): Promise<R> {
    return new Promise<R>((resolve, reject) => {
      let added = false;
      let done = false;
      const finish = (outcome: () => void) => {
        if (done) return;
        done = true;
        clearTimeout(deadline);
        clearInterval(watch);
        const set = this.waiters.get(jobId);
        set?.delete(waiter);
        if (set?.size === 0) this.waiters.delete(jobId);
        this.pending.delete(cancel);
        outcome();
      };
      const waiter: Waiter = {
        // A worker-side failure is rethrown as the same typed error (code, status,
        // message, details), so the caller answers with it.
        settle: (reply) => finish(() => (reply.ok ? resolve(reply.value as R) : reject(fromJobError(reply.error)))),
      };
      const cancel = () => finish(() => reject(new Error('the gateway is shutting down')));
      const outagesAtStart = this.outageCount();
      const deadline = setTimeout(() => {
        const spanned = this.outages !== outagesAtStart || this.redis.status !== 'ready';
        finish(() => reject(spanned ? new WaitSpannedOutageError(waitMs) : new Error(`no result within ${waitMs} ms`)));
      }, waitMs);
      let checking = false;
      const seen: Seen = { misses: 0, workerMissing: 0 };
      const watch = setInterval(() => {
        if (!added || checking) return;
        checking = true;
        void check(seen)
          .then((outcome) => {
            if (outcome instanceof Error) finish(() => reject(outcome));
            else if (outcome) waiter.settle(outcome);
          })
          .catch(() => undefined)
          .finally(() => (checking = false));
      }, this.config.worker.heartbeatMs);
      let set = this.waiters.get(jobId);
      if (!set) this.waiters.set(jobId, (set = new Set()));
      set.add(waiter);
      this.pending.add(cancel);
      add().then(
        () => (added = true),
        (error: Error) => finish(() => reject(error)),
      );
    });
  }

  // What a periodic look at a waited-on BullMQ job concludes, if anything.
  private async checkJob(queue: Queue, jobId: string, workerId: string, seen: Seen): Promise<JobReply | Error | null> {
    if (await this.workerGone(workerId, seen)) {
      // Nobody will take it from a dead worker's queue; drop it if still waiting.
      await queue.remove(jobId).catch(() => undefined);
      return new WorkerLostError(workerId);
    }
    const state = await queue.getJobState(jobId);
    if (state === 'completed' || state === 'failed') {
      const job = await Job.fromId(queue, jobId);
      if (!job) return null;
      if (state === 'completed') return { jobId, ok: true, value: job.returnvalue };
      // The worker stores the typed error on the job before failing it.
      const { failure } = job.data as JobFailureRecord;
      return { jobId, ok: false, error: isJobError(failure) ? failure : fromJobErrorReason(job.failedReason) };
    }
    // Lost with Redis: the caller decides what it can still find out.
    if (state === 'unknown') return new Error(`job ${jobId} is gone and its reply was not received`);
    return null;
  }

  // The same for an execution on the lane. Its outcome, if stored, ends the wait (a
  // success: the record in PostgreSQL is final, the caller reads it). Waiting in the
  // lane or taken by the worker, it goes on. In neither, nor answered, twice in a row
  // (a heartbeat period apart, longer than a move from the lane to \`active\` takes): it
  // was lost with Redis' data.
  private async checkExecution(workerId: string, job: ExecutionLaneJob, payload: string, seen: Seen): Promise<JobReply | Error | null> {
    const lane = executionLaneKey(workerId);
    if (await this.workerGone(workerId, seen)) {
      // Nobody will take it from a dead worker's lane; drop it if still there.
      await this.redis.lrem(lane, 1, payload).catch(() => undefined);
      return new WorkerLostError(workerId);
    }
    const replies = await this.redis
      .multi()
      .get(executionOutcomeKey(job.dispatchId))
      .lpos(lane, payload)
      .lpos(executionLaneActiveKey(workerId), payload)
      .exec();
    const [outcome, waiting, taken] = (replies ?? []).map(([, value]) => value);
    if (typeof outcome === 'string') {
      const parsed = JSON.parse(outcome) as ExecutionOutcome;
      if ('lost' in parsed) return new WorkerLostError(workerId);
      if (!parsed.ok) return { jobId: job.jobId, ok: false, error: parsed.error };
      return new Error(`execution job ${job.jobId} finished and its reply was not received`);
    }
    if (waiting !== null || taken !== null) {
      seen.misses = 0;
      return null;
    }
    return ++seen.misses >= 2 ? new Error(`execution job ${job.jobId} is gone and its reply was not received`) : null;
  }

  // A worker is given up for lost when its heartbeat is missing at two checks in a row
  // (a heartbeat period apart): once may be a Redis restart that lost the key, which a
  // live worker writes again within a period.
  private async workerGone(workerId: string, seen: Seen): Promise<boolean> {
    if (await this.workers.isLive(workerId)) {
      seen.workerMissing = 0;
      return false;
    }
    return ++seen.workerMissing >= 2;
  }

  subscribeOutput(executionId: string, onEvent: (event: StreamEvent) => void) {
    return this.subscribe(executionStreamChannel(executionId), onEvent as (message: unknown) => void);
  }

  async subscribe(topic: string, onEvent: (message: unknown) => void) {
    const subscriber = this.ensureSubscriber();
    let set = this.listeners.get(topic);
    if (!set) {
      set = new Set();
      this.listeners.set(topic, set);
      await subscriber.subscribe(topic);
    }
    set.add(onEvent);
    return async () => {
      set.delete(onEvent);
      if (set.size === 0) {
        this.listeners.delete(topic);
        await subscriber.unsubscribe(topic).catch(() => undefined);
      }
    };
  }

  async publish(topic: string, message: unknown): Promise<void> {
    await this.redis.publish(topic, JSON.stringify(message));
  }

  // The mark and the message in one MULTI: a worker that misses the message finds the
  // mark (SessionJobsProcessor, at start and after its subscriber reconnects).
  async interrupt(workerId: string, executionId: string): Promise<void> {
    const message: ExecutionInterruptMessage = { executionId };
    const replies = await this.redis
      .multi()
      .set(executionInterruptedKey(executionId), '1', 'EX', this.interruptMarkTtlS())
      .publish(executionInterruptChannel(workerId), JSON.stringify(message))
      .exec();
    const failed = replies?.find(([error]) => error)?.[0];
    if (failed) throw failed;
  }

  async markInterrupted(executionId: string): Promise<void> {
    await this.redis.set(executionInterruptedKey(executionId), '1', 'EX', this.interruptMarkTtlS());
  }

  async interruptRequested(executionId: string): Promise<boolean> {
    return (await this.redis.exists(executionInterruptedKey(executionId))) === 1;
  }

  // An execution runs within its start deadline and then its time limit, at most the
  // platform's ceiling; the mark is kept that long, and a minute more.
  private interruptMarkTtlS(): number {
    return Math.ceil((this.config.worker.executionStartDeadlineMs + this.config.maxLimits.timeoutMs) / 1000) + 60;
  }

  // Counts per worker queue, for the admin API.
  // Counts per worker: its queue's (BullMQ) and its execution lane's.
  async queueCounts(workerIds: string[]) {
    return Promise.all(
      workerIds.map(async (id) => {
        const [counts, waiting, active] = await Promise.all([
          this.channel(id).queue.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed'),
          this.redis.llen(executionLaneKey(id)),
          this.redis.llen(executionLaneActiveKey(id)),
        ]);
        return { workerId: id, queue: workerQueueName(id), counts, executions: { waiting, active } };
      }),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    for (const cancel of [...this.pending]) cancel();
    for (const channel of this.channels.values()) {
      await channel.queue.close().catch(() => undefined);
    }
    this.channels.clear();
    await this.subscriber?.quit().catch(() => undefined);
    this.subscriber = null;
    this.replies = null;
  }

  private channel(workerId: string): WorkerChannel {
    let channel = this.channels.get(workerId);
    if (!channel) {
      const name = workerQueueName(workerId);
      const queue = new Queue(name, { connection: redisOptions(this.config.redisUrl, 'drydock-gateway-queue') });
      queue.on('error', repeatedErrorLogger(this.logger, `queue ${name}`));
      channel = { queue, ready: queue.waitUntilReady() };
      this.channels.set(workerId, channel);
    }
    return channel;
  }

  // Subscribes to this gateway's reply channel once; ioredis subscribes again by itself
  // after a reconnect.
  private listenForReplies(): Promise<unknown> {
    if (!this.replies) {
      this.replies = this.ensureSubscriber()
        .subscribe(this.replyChannel)
        .catch((error: Error) => {
          this.replies = null;
          throw error;
        });
    }
    return this.replies;
  }

  private onReply(message: string): void {
    let reply: JobReply;
    try {
      reply = JSON.parse(message) as JobReply;
    } catch {
      return;
    }
    const set = this.waiters.get(reply.jobId);
    if (!set) return;
    for (const waiter of [...set]) waiter.settle(reply);
  }

  private ensureSubscriber(): Redis {
    if (!this.subscriber) {
      this.subscriber = createRedis(this.config.redisUrl, 'drydock-gateway-output');
      this.subscriber.on('message', (topic: string, message: string) => {
        if (topic === this.replyChannel) return this.onReply(message);
        const set = this.listeners.get(topic);
        if (!set) return;
        const event: unknown = JSON.parse(message);
        for (const listener of set) listener(event);
      });
    }
    return this.subscriber;
  }
}

// A job failed by BullMQ itself (stalled too often) or by a worker that predates typed
// errors: only its reason is known.
function fromJobErrorReason(reason: string | undefined) {
  const { code, status, message } = fromJobError(reason ?? 'unknown error');
  return { code, status, message };
}
