import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, TENANTS_REPOSITORY, type AppConfig, type TenantsRepository } from '@drydock/core';
import { BATCH_RUN_QUEUE, type BatchQueue } from './batch-queue.js';
import { BATCHES_REPOSITORY, type BatchesRepository } from './batches.repository.js';

// Puts a tenant's next items in the run queue, as many as its limits allow: at most
// `batchConcurrency` (tenant limit) of its items admitted or running, and at most each
// batch's `concurrency` of that batch's. Run at submit, whenever one of its items ends,
// and by the maintenance pass. Since no tenant ever has more than its limit in the
// queue, a small batch submitted after a large one of another tenant waits only for
// items already admitted, never for the whole large batch.
@Injectable()
export class BatchAdmission {
  private readonly logger = new Logger(BatchAdmission.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(BATCHES_REPOSITORY) private readonly batches: BatchesRepository,
    @Inject(BATCH_RUN_QUEUE) private readonly queue: BatchQueue,
    @Inject(TENANTS_REPOSITORY) private readonly tenants: TenantsRepository,
  ) {}

  async admit(tenantId: string): Promise<number> {
    const admitted = await this.batches.admit(tenantId, await this.limitOf(tenantId));
    if (admitted.length === 0) return 0;
    // Should this fail, the items stay admitted and the maintenance pass queues them.
    await this.queue.enqueue(admitted).catch((error: Error) => this.logger.warn(`queueing ${admitted.length} items of ${tenantId} failed: ${error.message}`));
    return admitted.length;
  }

  // The tenant's batchConcurrency, remembered briefly: admission runs after every item.
  private readonly limits = new Map<string, { limit: number; until: number }>();

  private async limitOf(tenantId: string): Promise<number> {
    const cached = this.limits.get(tenantId);
    if (cached && cached.until > Date.now()) return cached.limit;
    const tenant = await this.tenants.findById(tenantId);
    const limit = tenant?.limits.batchConcurrency ?? this.config.batches.tenantConcurrency;
    if (this.limits.size > 10_000) this.limits.clear();
    this.limits.set(tenantId, { limit, until: Date.now() + LIMIT_CACHE_MS });
    return limit;
  }
}

// A changed tenant limit applies to admissions within this time.
const LIMIT_CACHE_MS = 2_000;
