import { BullModule } from '@nestjs/bullmq';
import { Module } from '@nestjs/common';
import { LoggerModule } from 'nestjs-pino';
import { APP_CONFIG, ConfigModule, logDestination, pinoOptions, RedisModule, redisOptions, type AppConfig } from '@drydock/core';
import { DockerSandboxRuntime, DockerTemplateBuilder } from '@drydock/docker-sandbox';
import { MAINTENANCE_QUEUE, TEMPLATE_IMAGE_BUILDER } from '@drydock/execution';
import { PlatformDataModule, WORKER_REGISTRY, type WorkerRegistry } from '@drydock/sessions';
import { LIVE_WORKER_IDS, TemplateBuildRunner, TemplateMaintenance, type LiveWorkerIds } from '@drydock/templates';
import { SessionHostModule } from '@drydock/session-host';
import { VfsModule } from '@drydock/vfs';
import { ArtifactsModule } from '@drydock/artifacts';
import { BatchesModule } from '@drydock/batches';
import { BatchItemsProcessor } from './processors/batch-items.processor.js';
import { MaintenanceProcessor } from './processors/maintenance.processor.js';
import { SessionJobsProcessor } from './processors/session-jobs.processor.js';
import { TemplateBuildsProcessor } from './processors/template-builds.processor.js';
import { OperatorServer } from './operator/operator-server.js';
import { WorkerLifecycleService } from './registry/worker-lifecycle.service.js';

// Shared by the session host (artifact ingestion) and the maintenance processor
// (retention): one ArtifactsService.
const artifacts = ArtifactsModule.register({ imports: [PlatformDataModule] });
const batches = BatchesModule.register({ imports: [PlatformDataModule] });

// The worker: hosts sessions and batch items in Docker containers (@drydock/session-host
// with the Docker runtime) and consumes its queue, the shared batch-item queue and the
// shared maintenance queue.
@Module({
  imports: [
    ConfigModule,
    RedisModule,
    // JSON logs (no HTTP here: only Nest's logs, through pino).
    LoggerModule.forRootAsync({ inject: [APP_CONFIG], useFactory: (config: AppConfig) => ({ pinoHttp: [pinoOptions(config, 'worker'), logDestination()] }) }),
    PlatformDataModule,
    SessionHostModule.register({
      runtime: DockerSandboxRuntime,
      imports: [
        PlatformDataModule,
        VfsModule.register({ imports: [PlatformDataModule] }),
        artifacts,
        batches,
      ],
    }),
    artifacts,
    batches,
    BullModule.forRootAsync({
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => ({ connection: redisOptions(config.redisUrl, 'drydock-maintenance') }),
    }),
    BullModule.registerQueue({ name: MAINTENANCE_QUEUE }),
  ],
  providers: [
    SessionJobsProcessor,
    BatchItemsProcessor,
    WorkerLifecycleService,
    MaintenanceProcessor,
    OperatorServer,
    DockerTemplateBuilder,
    { provide: TEMPLATE_IMAGE_BUILDER, useExisting: DockerTemplateBuilder },
    {
      provide: LIVE_WORKER_IDS,
      inject: [WORKER_REGISTRY],
      useFactory: (workers: WorkerRegistry): LiveWorkerIds => async () => (await workers.listLive()).map((w) => w.id),
    },
    TemplateBuildRunner,
    TemplateMaintenance,
    TemplateBuildsProcessor,
  ],
})
export class WorkerModule {}
