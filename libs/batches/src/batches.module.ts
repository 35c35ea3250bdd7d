import { type DynamicModule, Module, type ModuleMetadata, type Provider } from '@nestjs/common';
import { BatchAdmission } from './batch-admission.js';
import { BatchEventStreams } from './batch-event-streams.js';
import { BatchItemLedger } from './batch-item-ledger.js';
import { BatchMaintenance } from './batch-maintenance.js';
import { BATCH_RUN_QUEUE } from './batch-queue.js';
import { BATCHES_REPOSITORY } from './batches.repository.js';
import { BatchesService } from './batches.service.js';
import { BullMqBatchQueue } from './bullmq-batch-queue.js';
import { TypeOrmBatchesRepository } from './typeorm-batches.repository.js';

// Batches for both apps: the gateway uses BatchesService and BatchEventStreams, the
// worker BatchItemLedger and BatchMaintenance. Needs the global ConfigModule and
// RedisModule, and from `imports` the TypeORM connection, TENANTS_REPOSITORY and
// WORKER_REGISTRY (PlatformDataModule).
@Module({})
export class BatchesModule {
  static register(options: { imports: NonNullable<ModuleMetadata['imports']> }): DynamicModule {
    const providers: Provider[] = [
      { provide: BATCHES_REPOSITORY, useClass: TypeOrmBatchesRepository },
      BullMqBatchQueue,
      { provide: BATCH_RUN_QUEUE, useExisting: BullMqBatchQueue },
      BatchAdmission,
      BatchesService,
      BatchEventStreams,
      BatchItemLedger,
      BatchMaintenance,
    ];
    return {
      module: BatchesModule,
      imports: options.imports,
      providers,
      exports: [BatchesService, BatchEventStreams, BatchItemLedger, BatchMaintenance, BatchAdmission, BATCHES_REPOSITORY, BullMqBatchQueue],
    };
  }
}
