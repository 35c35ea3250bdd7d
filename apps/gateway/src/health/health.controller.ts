import { Controller, Get, Inject, Res } from '@nestjs/common';
import type { Response } from 'express';
import type { Redis } from 'ioredis';
import { DatabaseProbe, REDIS } from '@drydock/core';
import { WORKER_REGISTRY, type WorkerRegistry } from '@drydock/sessions';

type Check = { status: 'up' | 'down'; detail?: string };

@Controller('health')
export class HealthController {
  constructor(
    private readonly db: DatabaseProbe,
    @Inject(REDIS) private readonly redis: Redis,
    @Inject(WORKER_REGISTRY) private readonly workers: WorkerRegistry,
  ) {}

  @Get()
  async health(@Res() res: Response) {
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
    res.status(ok ? 200 : 503).json({ status: ok ? 'ok' : 'degraded', checks });
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
