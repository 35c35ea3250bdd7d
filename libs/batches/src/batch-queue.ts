import type { BatchItemRef } from './batch.types.js';

// The run queue of batch items (BullMQ in production): admitted items go in, any live
// worker takes them. Adding an item already in the queue is a no-op (its job id is the
// item's).
export interface BatchQueue {
  enqueue(items: BatchItemRef[]): Promise<void>;
  // The items among these whose job is neither waiting nor running: gone, failed
  // (BullMQ gave up on it) or completed without a record.
  orphaned<T extends BatchItemRef>(items: T[]): Promise<T[]>;
  // Queues these items again, replacing a failed or completed job of theirs.
  requeue(items: BatchItemRef[]): Promise<void>;
  // Drops items that have not started (after a cancel); best effort.
  remove(items: BatchItemRef[]): Promise<void>;
}

export const BATCH_RUN_QUEUE = Symbol('BATCH_RUN_QUEUE');
