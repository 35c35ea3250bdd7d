import { Module } from '@nestjs/common';
import { Redis } from 'ioredis';
import { ConfigModule, REDIS, RedisModule } from '@drydock/core';
import { DockerSandboxRuntime, RedisRunGuard, RUN_GUARD, SANDBOX_RUNTIME } from '@drydock/execution';
import { PlatformDataModule } from '@drydock/sessions';
import { SessionJobsProcessor } from './processors/session-jobs.processor.js';
import { WorkerLifecycleService } from './registry/worker-lifecycle.service.js';
import { SessionHostService } from './sessions/session-host.service.js';

@Module({
  imports: [ConfigModule, RedisModule, PlatformDataModule],
  providers: [
    DockerSandboxRuntime,
    { provide: SANDBOX_RUNTIME, useExisting: DockerSandboxRuntime },
    { provide: RUN_GUARD, inject: [REDIS], useFactory: (redis: Redis) => new RedisRunGuard(redis) },
    SessionHostService,
    SessionJobsProcessor,
    WorkerLifecycleService,
  ],
})
export class WorkerModule {}
