import { Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { Redis } from 'ioredis';
import {
  CORE_ENTITIES,
  ConfigModule,
  DatabaseModule,
  REDIS,
  RedisModule,
  TENANTS_REPOSITORY,
  TenantsService,
  TypeOrmTenantsRepository,
} from '@drydock/core';
import {
  EXECUTION_ENTITIES,
  EXECUTIONS_REPOSITORY,
  JOB_DISPATCHER,
  TypeOrmExecutionsRepository,
} from '@drydock/execution';
import {
  RedisWorkerRegistry,
  SESSIONS_ENTITIES,
  SESSIONS_REPOSITORY,
  SessionExecutionsService,
  SessionsService,
  TypeOrmSessionsRepository,
  WORKER_REGISTRY,
} from '@drydock/sessions';
import { AdminOperationsController } from './admin/admin-operations.controller.js';
import { AdminTenantsController } from './admin/admin-tenants.controller.js';
import { AdminAuthGuard } from './auth/admin-auth.guard.js';
import { TenantAuthGuard } from './auth/tenant-auth.guard.js';
import { ExecutionsController } from './executions/executions.controller.js';
import { HealthController } from './health/health.controller.js';
import { ErrorResponseFilter } from './http/error-response.filter.js';
import { BullMqJobDispatcher } from './queue/bullmq-job-dispatcher.js';
import { SessionsController } from './sessions/sessions.controller.js';

@Module({
  imports: [
    ConfigModule,
    RedisModule,
    DatabaseModule.forRoot([...CORE_ENTITIES, ...SESSIONS_ENTITIES, ...EXECUTION_ENTITIES]),
  ],
  controllers: [
    AdminTenantsController,
    AdminOperationsController,
    SessionsController,
    ExecutionsController,
    HealthController,
  ],
  providers: [
    { provide: APP_FILTER, useClass: ErrorResponseFilter },
    { provide: TENANTS_REPOSITORY, useClass: TypeOrmTenantsRepository },
    { provide: SESSIONS_REPOSITORY, useClass: TypeOrmSessionsRepository },
    { provide: EXECUTIONS_REPOSITORY, useClass: TypeOrmExecutionsRepository },
    { provide: WORKER_REGISTRY, inject: [REDIS], useFactory: (redis: Redis) => new RedisWorkerRegistry(redis) },
    BullMqJobDispatcher,
    { provide: JOB_DISPATCHER, useExisting: BullMqJobDispatcher },
    TenantsService,
    SessionsService,
    SessionExecutionsService,
    TenantAuthGuard,
    AdminAuthGuard,
  ],
})
export class GatewayModule {}
