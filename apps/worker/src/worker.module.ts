import { Module } from '@nestjs/common';
import { Redis } from 'ioredis';
import { CORE_ENTITIES, ConfigModule, DatabaseModule, REDIS, RedisModule } from '@drydock/core';
import {
  DockerSandboxRuntime,
  EXECUTION_ENTITIES,
  EXECUTIONS_REPOSITORY,
  RedisRunGuard,
  RUN_GUARD,
  SANDBOX_RUNTIME,
  TypeOrmExecutionsRepository,
} from '@drydock/execution';
import {
  RedisWorkerRegistry,
  SESSIONS_ENTITIES,
  SESSIONS_REPOSITORY,
  TypeOrmSessionsRepository,
  WORKER_REGISTRY,
} from '@drydock/sessions';
import { SessionJobsProcessor } from './processors/session-jobs.processor.js';
import { WorkerLifecycleService } from './registry/worker-lifecycle.service.js';
import { SessionHostService } from './sessions/session-host.service.js';

@Module({
  imports: [
    ConfigModule,
    RedisModule,
    DatabaseModule.forRoot([...CORE_ENTITIES, ...SESSIONS_ENTITIES, ...EXECUTION_ENTITIES]),
  ],
  providers: [
    DockerSandboxRuntime,
    { provide: SANDBOX_RUNTIME, useExisting: DockerSandboxRuntime },
    { provide: SESSIONS_REPOSITORY, useClass: TypeOrmSessionsRepository },
    { provide: EXECUTIONS_REPOSITORY, useClass: TypeOrmExecutionsRepository },
    { provide: WORKER_REGISTRY, inject: [REDIS], useFactory: (redis: Redis) => new RedisWorkerRegistry(redis) },
    { provide: RUN_GUARD, inject: [REDIS], useFactory: (redis: Redis) => new RedisRunGuard(redis) },
    SessionHostService,
    SessionJobsProcessor,
    WorkerLifecycleService,
  ],
})
export class WorkerModule {}
