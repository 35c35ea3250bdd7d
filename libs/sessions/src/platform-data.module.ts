import { Module } from '@nestjs/common';
import { Redis } from 'ioredis';
import {
  CORE_ENTITIES,
  DatabaseModule,
  REDIS,
  TENANTS_REPOSITORY,
  TypeOrmTenantsRepository,
} from '@drydock/core';
import { EXECUTION_ENTITIES, EXECUTIONS_REPOSITORY, TypeOrmExecutionsRepository } from '@drydock/execution';
import { VFS_ENTITIES } from '@drydock/vfs';
import { TEMPLATE_ENTITIES, TEMPLATES_REPOSITORY, TemplateBuildLogs, TemplateBuildQueue, TemplatesService, TypeOrmTemplatesRepository } from '@drydock/templates';
import { EGRESS_ENTITIES, EGRESS_LOG_REPOSITORY, TypeOrmEgressLogRepository } from '@drydock/egress';
import { SESSIONS_ENTITIES } from './session.entity.js';
import { SESSIONS_REPOSITORY } from './sessions.repository.js';
import { RedisWorkerRegistry } from './redis-worker-registry.js';
import { TypeOrmSessionsRepository } from './typeorm-sessions.repository.js';
import { WORKER_REGISTRY } from './worker-registry.js';
import { DatasetRegistry } from './datasets/dataset-registry.js';

const LIVENESS_SNAPSHOT_MS = 1000;

// The database connection and every repository and registry both apps use, bound to
// their tokens in one place. Needs the global ConfigModule and RedisModule.
@Module({
  imports: [DatabaseModule.forRoot([...CORE_ENTITIES, ...SESSIONS_ENTITIES, ...EXECUTION_ENTITIES, ...VFS_ENTITIES, ...TEMPLATE_ENTITIES, ...EGRESS_ENTITIES])],
  providers: [
    { provide: TENANTS_REPOSITORY, useClass: TypeOrmTenantsRepository },
    { provide: SESSIONS_REPOSITORY, useClass: TypeOrmSessionsRepository },
    { provide: EXECUTIONS_REPOSITORY, useClass: TypeOrmExecutionsRepository },
    {
      provide: WORKER_REGISTRY,
      inject: [REDIS],
      useFactory: (redis: Redis) => new RedisWorkerRegistry(redis, LIVENESS_SNAPSHOT_MS),
    },
    DatasetRegistry,
    { provide: TEMPLATES_REPOSITORY, useClass: TypeOrmTemplatesRepository },
    TemplateBuildLogs,
    TemplateBuildQueue,
    TemplatesService,
    { provide: EGRESS_LOG_REPOSITORY, useClass: TypeOrmEgressLogRepository },
  ],
  exports: [
    DatabaseModule,
    TENANTS_REPOSITORY,
    SESSIONS_REPOSITORY,
    EXECUTIONS_REPOSITORY,
    WORKER_REGISTRY,
    DatasetRegistry,
    TEMPLATES_REPOSITORY,
    TemplateBuildLogs,
    TemplateBuildQueue,
    TemplatesService,
    EGRESS_LOG_REPOSITORY,
  ],
})
export class PlatformDataModule {}
