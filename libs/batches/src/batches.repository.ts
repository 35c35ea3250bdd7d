import type {
  BatchItemInput,
  BatchItemRecord,
  BatchItemRef,
  BatchRecord,
  ItemOutcome,
  NewBatch,
  StartedItem,
} from './batch.types.js';

export type ItemStatusFilter = 'queued' | 'running' | 'ok' | 'error' | 'timeout' | 'memory' | 'killed' | 'cancelled';

// The storage port of batches and their items. Tenant-facing methods take the tenant
// first and refuse an empty one; the worker's methods take an item reference, which
// carries its tenant.
export interface BatchesRepository {
  // The batch and every item in one transaction, items written as `items` yields them
  // (chunk by chunk, so a 100,000-item NDJSON body is never held whole). If `items`
  // throws, nothing is recorded. When the tenant already used the idempotency key, the
  // existing batch is returned (`created: false`) and `items` is not read.
  create(tenantId: string, batch: NewBatch, items: AsyncIterable<BatchItemInput[]>): Promise<{ record: BatchRecord; created: boolean }>;
  findById(tenantId: string, batchId: string): Promise<BatchRecord | null>;
  findByIdempotencyKey(tenantId: string, key: string): Promise<BatchRecord | null>;
  // Newest first; `before` is the id of the last batch of the previous page.
  list(tenantId: string, page: { limit: number; before?: string }): Promise<BatchRecord[]>;
  listItems(tenantId: string, batchId: string, filter: { status?: ItemStatusFilter; offset: number; limit: number }): Promise<BatchItemRecord[]>;
  // Finished items with an index above `afterIndex`, in index order (results streaming).
  finishedItemsAfter(tenantId: string, batchId: string, afterIndex: number, limit: number): Promise<BatchItemRecord[]>;

  // Moves the tenant's next queued items to `admitted`, oldest batch first, so that at
  // most `tenantLimit` of its items (and each batch's own concurrency) are admitted or
  // running at once. Serialised per tenant. Returns what it admitted.
  admit(tenantId: string, tenantLimit: number): Promise<BatchItemRef[]>;
  // Marks an admitted item (or a running one whose worker was lost) running on this
  // worker. Null when it is no longer to run (finished, cancelled) or has used its
  // `maxAttempts`.
  start(ref: BatchItemRef, workerId: string, maxAttempts: number): Promise<StartedItem | null>;
  // Records how a running item ended, once: a second outcome for the same item (a
  // redelivered job) changes nothing and returns false.
  finish(ref: BatchItemRef, outcome: ItemOutcome, retentionSeconds: number): Promise<boolean>;
  // Queued and admitted items become cancelled; running ones are left to finish. The
  // batch is `cancelling` until they have, then `cancelled` (finish moves it).
  cancel(tenantId: string, batchId: string, retentionSeconds: number): Promise<BatchRecord | null>;
  // Where an item stands, for a worker whose start() found nothing to run.
  runState(ref: BatchItemRef): Promise<{ status: string; attempts: number; batchStatus: string } | null>;
  // The items of a batch running right now, for a kill.
  runningItems(tenantId: string, batchId: string): Promise<{ index: number; workerId: string | null }[]>;

  // Maintenance, across tenants by design. Items admitted before `before` and items
  // running since before `startedBefore` (either may have lost its run queue job),
  // tenants with items still to admit.
  strandedAdmitted(before: Date, limit: number): Promise<BatchItemRef[]>;
  strandedRunning(startedBefore: Date, limit: number): Promise<(BatchItemRef & { attempts: number })[]>;
  tenantsWaiting(limit: number): Promise<string[]>;
  // Deletes up to `limit` batches (with their items) whose retention is over.
  deleteExpired(now: Date, limit: number): Promise<number>;
}

export const BATCHES_REPOSITORY = Symbol('BATCHES_REPOSITORY');
