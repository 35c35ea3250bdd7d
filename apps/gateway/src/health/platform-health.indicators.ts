import { Inject, Injectable } from '@nestjs/common';
import { HealthIndicatorService } from '@nestjs/terminus';
import type { Redis } from 'ioredis';
import { DatabaseProbe, REDIS } from '@drydock/core';
import { WORKER_REGISTRY, type WorkerRegistry } from '@drydock/sessions';

// What the gateway needs to serve: PostgreSQL, Redis, and a live worker that reaches
// Docker. Terminus health indicators, for /health/ready.
@Injectable()
export class PlatformHealthIndicators {
  constructor(
    private readonly indicators: HealthIndicatorService,
    private readonly db: DatabaseProbe,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(WORKER_REGISTRY) private readonly workers: WorkerRegistry,
  ) {}

  async database() {
    const session = this.indicators.check('database');
    try {
      await this.db.ping();
      return session.up();
    } catch (error) {
      return session.down({ message: (error as Error).message });
    }
  }

  async redisServer() {
    const session = this.indicators.check('redis');
    try {
      await this.redis.ping();
      return session.up();
    } catch (error) {
      return session.down({ message: (error as Error).message });
    }
  }

  async workersReachingDocker() {
    const session = this.indicators.check('workers');
    try {
      const live = await this.workers.listLive();
      const reachDocker = live.filter((w) => w.dockerHealthy && (w.state ?? 'active') === 'active').length;
      return reachDocker > 0 ? session.up({ live: live.length, reachDocker }) : session.down({ live: live.length, reachDocker });
    } catch (error) {
      return session.down({ message: (error as Error).message });
    }
  }
}
