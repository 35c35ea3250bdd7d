import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Queue, QueueEvents, type Job } from 'bullmq';
import type { Redis } from 'ioredis';
import { APP_CONFIG, createRedis, redisOptions, type AppConfig } from '@drydock/core';
import {
  executionStreamChannel,
  jobIdFor,
  workerQueueName,
  type JobDataByName,
  type JobDispatcher,
  type JobName,
  type StreamEvent,
  WorkerLostError,
} from '@drydock/execution';
import { WORKER_REGISTRY, type WorkerRegistry } from '@drydock/sessions';

interface WorkerChannel {
  queue: Queue;
  events: QueueEvents;
  ready: Promise<unknown>;
}

// BullMQ implementation of the dispatch port: one queue (and one event listener) per
// worker, created on first use. Live output arrives over Redis pub/sub.
@Injectable()
export class BullMqJobDispatcher implements JobDispatcher, OnApplicationShutdown {
  private readonly logger = new Logger(BullMqJobDispatcher.name);
  private readonly channels = new Map<string, WorkerChannel>();
  private subscriber: Redis | null = null;
  private readonly listeners = new Map<string, Set<(event: StreamEvent) => void>>();
  private readonly pending = new Set<() => void>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WORKER_REGISTRY) private readonly workers: WorkerRegistry,
  ) {}

  async dispatch<N extends JobName, R>(
    workerId: string,
    name: N,
    data: JobDataByName[N],
    options: { waitMs: number },
  ): Promise<R> {
    const channel = this.channel(workerId);
    await channel.ready;
    const job = await channel.queue.add(name, data, {
      jobId: jobIdFor(name, data),
      attempts: 1,
      // The finished record lives in PostgreSQL and the result arrives with the
      // completion event, so completed jobs are dropped at once (cheapest).
      removeOnComplete: true,
      removeOnFail: { age: 24 * 3600 },
    });
    return this.waitFor<R>(channel, job, workerId, options.waitMs);
  }

  // Waits for the job's completion event, for at most `waitMs`, and gives up early when
  // the worker's heartbeat lapses. Unlike BullMQ's waitUntilFinished, every timer and
  // listener is released the moment the wait ends, and pending waits end on shutdown.
  private waitFor<R>(channel: WorkerChannel, job: Job, workerId: string, waitMs: number): Promise<R> {
    const { events } = channel;
    const completed = `completed:${job.id}`;
    const failed = `failed:${job.id}`;
    return new Promise<R>((resolve, reject) => {
      const finish = (outcome: () => void) => {
        clearTimeout(deadline);
        clearInterval(watch);
        events.off(completed as never, onCompleted as never);
        events.off(failed as never, onFailed as never);
        this.pending.delete(cancel);
        outcome();
      };
      const onCompleted = (args: { returnvalue: unknown }) => finish(() => resolve(args.returnvalue as R));
      const onFailed = (args: { failedReason: string }) => finish(() => reject(new Error(args.failedReason)));
      const cancel = () => finish(() => reject(new Error('the gateway is shutting down')));
      const deadline = setTimeout(() => finish(() => reject(new Error(`no result within ${waitMs} ms`))), waitMs);
      const watch = setInterval(() => {
        void this.workers.isLive(workerId).then(
          (live) => {
            if (live) return;
            // Nobody will take it from a dead worker's queue; drop it if still waiting.
            void job.remove().catch(() => undefined);
            finish(() => reject(new WorkerLostError(workerId)));
          },
          () => undefined,
        );
      }, this.config.worker.heartbeatMs);
      // Registered in the same tick as the add resolved, before any event can be read.
      events.on(completed as never, onCompleted as never);
      events.on(failed as never, onFailed as never);
      this.pending.add(cancel);
    });
  }

  async subscribeOutput(executionId: string, onEvent: (event: StreamEvent) => void) {
    const subscriber = await this.ensureSubscriber();
    const topic = executionStreamChannel(executionId);
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

  // Counts per worker queue, for the admin API.
  async queueCounts(workerIds: string[]) {
    return Promise.all(
      workerIds.map(async (id) => ({
        workerId: id,
        queue: workerQueueName(id),
        counts: await this.channel(id).queue.getJobCounts('waiting', 'active', 'completed', 'failed', 'delayed'),
      })),
    );
  }

  async onApplicationShutdown(): Promise<void> {
    for (const cancel of [...this.pending]) cancel();
    for (const channel of this.channels.values()) {
      await channel.events.close().catch(() => undefined);
      await channel.queue.close().catch(() => undefined);
    }
    this.channels.clear();
    await this.subscriber?.quit().catch(() => undefined);
  }

  private channel(workerId: string): WorkerChannel {
    let channel = this.channels.get(workerId);
    if (!channel) {
      const name = workerQueueName(workerId);
      const queue = new Queue(name, { connection: redisOptions(this.config.redisUrl, 'drydock-gateway-queue') });
      const events = new QueueEvents(name, {
        connection: redisOptions(this.config.redisUrl, 'drydock-gateway-events'),
      });
      events.on('error', (error) => this.logger.warn(`queue events ${name}: ${error.message}`));
      channel = { queue, events, ready: Promise.all([queue.waitUntilReady(), events.waitUntilReady()]) };
      this.channels.set(workerId, channel);
    }
    return channel;
  }

  private async ensureSubscriber(): Promise<Redis> {
    if (!this.subscriber) {
      this.subscriber = createRedis(this.config.redisUrl, 'drydock-gateway-output');
      this.subscriber.on('message', (topic: string, message: string) => {
        const set = this.listeners.get(topic);
        if (!set) return;
        const event = JSON.parse(message) as StreamEvent;
        for (const listener of set) listener(event);
      });
    }
    return this.subscriber;
  }
}
