import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import { Queue } from 'bullmq';
import type { Redis } from 'ioredis';
import { APP_CONFIG, REDIS, redisOptions, repeatedErrorLogger, ServiceUnavailableError, type AppConfig } from '@drydock/core';

// Template builds: one queue shared by every worker, each taking builds with its own
// build slots (WORKER_TEMPLATE_BUILD_CONCURRENCY). A job names its version; the
// Dockerfile stays in PostgreSQL. BullMQ renews a build's lock while it runs; the job
// of a worker that died lapses and is failed by the maintenance pass (a build is not
// run twice: its steps may not be repeatable).
export const TEMPLATE_BUILD_QUEUE = 'drydock-template-builds';
export const TEMPLATE_BUILD_LOCK_MS = 60_000;

export interface TemplateBuildJobData {
  templateId: string;
  version: number;
}

export const templateBuildJobId = (data: TemplateBuildJobData) => `build-${data.templateId}-${data.version}`;

@Injectable()
export class TemplateBuildQueue implements OnApplicationShutdown {
  private readonly logger = new Logger(TemplateBuildQueue.name);
  private queue: Queue<TemplateBuildJobData> | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis,
  ) {}

  // 503 SERVICE_UNAVAILABLE before anything is recorded, when Redis is not there to take
  // the build.
  assertReady(): void {
    if (this.redis.status !== 'ready') throw new ServiceUnavailableError('redis');
  }

  async enqueue(data: TemplateBuildJobData): Promise<void> {
    await this.get().add('build', data, {
      jobId: templateBuildJobId(data),
      attempts: 1,
      removeOnComplete: { age: 24 * 3600 },
      removeOnFail: { age: 24 * 3600 },
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await this.queue?.close().catch(() => undefined);
    this.queue = null;
  }

  private get(): Queue<TemplateBuildJobData> {
    if (!this.queue) {
      this.queue = new Queue<TemplateBuildJobData>(TEMPLATE_BUILD_QUEUE, { connection: redisOptions(this.config.redisUrl, 'drydock-template-queue') });
      this.queue.on('error', repeatedErrorLogger(this.logger, `queue ${TEMPLATE_BUILD_QUEUE}`));
    }
    return this.queue;
  }
}
