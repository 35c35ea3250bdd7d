import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { Redis } from 'ioredis';
import { APP_CONFIG, ConfigModule, REDIS, RedisModule, redisOptions, type AppConfig } from '@drydock/core';
import { DockerSandboxRuntime } from '@drydock/docker-sandbox';
import {
  MAINTENANCE_QUEUE,
  RedisRunGuard,
  RUN_GUARD,
  SANDBOX_RUNTIME,
} from '@drydock/execution';
import { PlatformDataModule } from '@drydock/sessions';
import { VfsModule } from '@drydock/vfs';
import { ArtifactsModule } from '@drydock/artifacts';
import { SessionSweeper } from './maintenance/session-sweeper.service.js';
import { MaintenanceProcessor } from './processors/maintenance.processor.js';
import { SessionJobsProcessor } from './processors/session-jobs.processor.js';
import { WorkerLifecycleService } from './registry/worker-lifecycle.service.js';
import { ArtifactIngester } from './sessions/artifact-ingester.js';
import { SessionFileSync } from './sessions/session-file-sync.js';
import { SessionHostService } from './sessions/session-host.service.js';

@Module({
  imports: [
    ConfigModule,
    RedisModule,
    PlatformDataModule,
    VfsModule.register({ imports: [PlatformDataModule] }),
    ArtifactsModule.register({ imports: [PlatformDataModule] }),
    BullModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({ connection: redisOptions(config.redisUrl, 'drydock-maintenance') }),
    }),
    BullModule.registerQueue({ name: MAINTENANCE_QUEUE }),
  ],
  providers: [
    DockerSandboxRuntime,
    { provide: SANDBOX_RUNTIME, useExisting: DockerSandboxRuntime },
    { provide: RUN_GUARD, inject: [REDIS], useFactory: (redis: Redis) => new RedisRunGuard(redis) },
    SessionFileSync,
    ArtifactIngester,
    SessionHostService,
    SessionJobsProcessor,
    WorkerLifecycleService,
    SessionSweeper,
    MaintenanceProcessor,
  ],
})
export class WorkerModule {}
