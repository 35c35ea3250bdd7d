import { Controller, Get, Inject, Res, type OnModuleInit } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import { PlatformMetrics } from '@drydock/metrics';
import { WORKER_REGISTRY, type WorkerRegistry } from '@drydock/sessions';
import { UsageRepository } from '../admin/usage.repository.js';
import { AdminRoutes } from '../openapi/api-auth.js';
import { RedisJobDispatcher } from '../queue/redis-job-dispatcher.js';

// Prometheus text for this gateway (prom-client), behind the admin key: Prometheus sends
// it as a bearer token (`authorization` in its scrape config). Queue depths and the bytes
// each tenant stores are read when scraped.
@Controller('metrics')
@AdminRoutes('operations')
export class MetricsController implements OnModuleInit {
  constructor(
    private readonly metrics: PlatformMetrics,
    private readonly dispatcher: RedisJobDispatcher,
    private readonly usage: UsageRepository,
    @Inject(WORKER_REGISTRY) private readonly workers: WorkerRegistry,
  ) {}

  onModuleInit(): void {
    this.metrics.onScrape(async () => {
      const live = await this.workers.listLive();
      for (const { workerId, queue, counts, executions } of await this.dispatcher.queueCounts(live.map((w) => w.id))) {
        for (const [state, n] of Object.entries(counts)) this.metrics.queueJobs.set({ queue, state }, n);
        for (const [state, n] of Object.entries(executions)) this.metrics.queueJobs.set({ queue: `drydock-exec-lane-${workerId}`, state }, n);
      }
    });
    this.metrics.onScrape(async () => {
      for (const stored of await this.usage.stored(null)) {
        this.metrics.tenantBytes.set({ tenant: stored.tenantId, kind: 'thread_files' }, stored.threadFileBytes);
        this.metrics.tenantBytes.set({ tenant: stored.tenantId, kind: 'artifacts' }, stored.artifactBytes);
      }
    });
  }

  @Get()
  @ApiOperation({ summary: "Prometheus metrics of this gateway (the admin key as the scrape's bearer token)" })
  @ApiProduces('text/plain')
  @ApiOkResponse({
    description: 'The Prometheus text exposition format (`text/plain; version=0.0.4`), see docs/operations.md#metrics.',
    schema: { type: 'string' },
    example:
      '# HELP drydock_queue_jobs Jobs in the platform queues, by queue and state (read when scraped).\n' +
      '# TYPE drydock_queue_jobs gauge\ndrydock_queue_jobs{queue="…",state="waiting"} 0\n',
  })
  async scrape(@Res() reply: FastifyReply): Promise<void> {
    const { contentType, text } = await this.metrics.render();
    void reply.header('Content-Type', contentType).send(text);
  }
}
