import type { BatchItemStatus } from './batch.types.js';

// Redis pub/sub between the workers running a batch's items and the gateways streaming
// its events (GET /v1/batches/:id/events). Best effort: a streaming gateway also reads
// the batch's counts from PostgreSQL on a timer, so a lost message only delays.
export function batchEventsChannel(batchId: string): string {
  return `drydock:batch-events:${batchId}`;
}

// Workers listen here for `POST /v1/batches/:id/cancel {"kill": true}`.
export const BATCH_KILL_CHANNEL = 'drydock:batch-kill';

export type BatchEvent =
  | { type: 'item'; index: number; id: string | null; status: BatchItemStatus }
  | { type: 'changed' };

export interface BatchKillMessage {
  batchId: string;
  tenantId: string;
}
