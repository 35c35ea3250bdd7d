import { Controller, Get, Inject, Res, ServiceUnavailableException } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiServiceUnavailableResponse, ApiTags } from '@nestjs/swagger';
import { HealthCheck, HealthCheckService } from '@nestjs/terminus';
import type { FastifyReply } from 'fastify';
import type { Redis } from 'ioredis';
import { DatabaseProbe, REDIS } from '@drydock/core';
import { WORKER_REGISTRY, type WorkerRegistry } from '@drydock/sessions';
import { HealthCheckFailedResponse, HealthCheckResponse, PlatformHealthResponse } from './health.response.js';
import { PlatformHealthIndicators } from './platform-health.indicators.js';

// Terminus' own OpenAPI description is replaced by ours (health.response.ts); the
// no-cache header it sets stays.
const HEALTH_CHECK = { noCache: true, swaggerDocumentation: false };

type Check = { status: 'up' | 'down'; detail?: string };

@Controller('health')
@ApiTags('health')
export class HealthController {
  constructor(
    private readonly db: DatabaseProbe,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(WORKER_REGISTRY) private readonly workers: WorkerRegistry,
    private readonly checks: HealthCheckService,
    private readonly indicators: PlatformHealthIndicators,
  ) {}

  // Liveness (Kubernetes livenessProbe): the process answers. Restarting the gateway
  // would not bring PostgreSQL, Redis or a worker back, so they are not checked here.
  @Get('live')
  @HealthCheck(HEALTH_CHECK)
  @ApiOperation({ summary: 'Liveness probe: 200 while the process answers (no dependency is checked)' })
  @ApiOkResponse({ type: HealthCheckResponse })
  live() {
    return this.checks.check([]);
  }

  // Readiness (readinessProbe): send this gateway traffic only while PostgreSQL and Redis
  // answer and an active worker reaches Docker; 503 with Terminus' report otherwise.
  @Get('ready')
  @HealthCheck(HEALTH_CHECK)
  @ApiOperation({ summary: 'Readiness probe: 200 while PostgreSQL and Redis answer and an active worker reaches Docker' })
  @ApiOkResponse({ type: HealthCheckResponse, description: 'Ready.' })
  @ApiServiceUnavailableResponse({ type: HealthCheckFailedResponse, description: 'A dependency is down (or this gateway is shutting down): Terminus\' report.' })
  async ready(@Res() reply: FastifyReply) {
    try {
      const report = await this.checks.check([
          () => this.indicators.database(),
          () => this.indicators.redisServer(),
          () => this.indicators.workersReachingDocker(),
      ]);
      void reply.status(200).send(report);
    } catch (error) {
      if (!(error instanceof ServiceUnavailableException)) throw error;
      void reply.status(503).send(error.getResponse());
    }
  }

  @Get()
  @ApiOperation({ summary: 'Platform health: PostgreSQL, Redis and a worker reaching Docker' })
  @ApiOkResponse({ type: PlatformHealthResponse, description: 'Every check is up.' })
  @ApiServiceUnavailableResponse({ type: PlatformHealthResponse, description: 'A check is down (status: degraded).' })
  async health(@Res() reply: FastifyReply) {
    const database = await check(() => this.db.ping());
    const redis = await check(() => this.redis.ping());
    let docker: Check;
    try {
      const live = await this.workers.listLive();
      const healthy = live.filter((w) => w.dockerHealthy).length;
      docker = healthy > 0
        ? { status: 'up', detail: `${healthy} of ${live.length} workers reach Docker` }
        : { status: 'down', detail: live.length ? 'no worker reaches Docker' : 'no live worker' };
    } catch (error) {
      docker = { status: 'down', detail: (error as Error).message };
    }
    const checks = { database, redis, docker };
    const ok = Object.values(checks).every((c) => c.status === 'up');
    void reply.status(ok ? 200 : 503).send({ status: ok ? 'ok' : 'degraded', checks });
  }
}

async function check(probe: () => Promise<unknown>): Promise<Check> {
  try {
    await probe();
    return { status: 'up' };
  } catch (error) {
    return { status: 'down', detail: (error as Error).message };
  }
}
