import type { BatchItemJobData, EffectiveLimits, ExecutionFiles, RichResult, SessionNetwork } from '@drydock/execution';

// `cancelling`: cancelled while items were running; it becomes `cancelled` when the
// last of them ends. Only `completed` and `cancelled` are final.
export type BatchStatus = 'queued' | 'running' | 'completed' | 'cancelling' | 'cancelled';
export const FINAL_BATCH_STATUSES: readonly BatchStatus[] = ['completed', 'cancelled'];

// `admitted` is internal: the item is in the run queue (BullMQ) and counts as queued
// to clients.
export type BatchItemStatus = 'queued' | 'admitted' | 'running' | FinishedItemStatus;
export type FinishedItemStatus = 'ok' | 'error' | 'timeout' | 'memory' | 'killed' | 'cancelled';
export const FINISHED_ITEM_STATUSES: readonly FinishedItemStatus[] = ['ok', 'error', 'timeout', 'memory', 'killed', 'cancelled'];

export interface BatchCounts {
  queued: number;
  running: number;
  ok: number;
  error: number;
  timeout: number;
  memory: number;
  killed: number;
  cancelled: number;
}

export interface BatchRecord {
  id: string;
  tenantId: string;
  status: BatchStatus;
  total: number;
  counts: BatchCounts;
  limits: EffectiveLimits;
  timeoutMs: number;
  concurrency: number;
  idempotencyKey: string | null;
  metadata: Record<string, unknown> | null;
  // The template version its items start from ("name:version") and its image; null:
  // the platform's image.
  template: string | null;
  image: string | null;
  // The hosts its items may reach (checked against the tenant's ceiling at submission);
  // null: no network.
  network: SessionNetwork | null;
  createdAt: Date;
  startedAt: Date | null;
  finishedAt: Date | null;
}

// One item as submitted: its code, the text files put in /session before it runs, and
// the client's own id for it.
export interface BatchItemInput {
  code: string;
  files?: Record<string, string>;
  id?: string;
}

export interface BatchItemRecord {
  batchId: string;
  index: number;
  clientId: string | null;
  status: BatchItemStatus;
  attempts: number;
  stdout: string | null;
  stderr: string | null;
  truncated: boolean | null;
  result: RichResult | null;
  error: { name: string; value: string; traceback: string } | null;
  files: ExecutionFiles | null;
  artifacts: unknown[] | null;
  durationMs: number | null;
  startedAt: Date | null;
  finishedAt: Date | null;
}

export interface NewBatch {
  id: string;
  limits: EffectiveLimits;
  timeoutMs: number;
  concurrency: number;
  idempotencyKey: string | null;
  metadata: Record<string, unknown> | null;
  template: string | null;
  image: string | null;
  network: SessionNetwork | null;
}

// What the run queue carries for an item: where to find it (the code stays in
// PostgreSQL, so a 100,000-item batch costs Redis next to nothing).
export type BatchItemRef = BatchItemJobData;

// An item a worker is about to run: its code and files, and its batch's settings.
export interface StartedItem {
  ref: BatchItemRef;
  clientId: string | null;
  code: string;
  files: Record<string, string> | null;
  attempt: number;
  limits: EffectiveLimits;
  timeoutMs: number;
  // The batch's template image; null: the platform's.
  image: string | null;
  // The batch's network policy; null: no network.
  network: SessionNetwork | null;
}

// How an item ended, as recorded (once).
export interface ItemOutcome {
  status: Exclude<FinishedItemStatus, 'cancelled'>;
  stdout: string;
  stderr: string;
  truncated: boolean;
  result: RichResult | null;
  error: { name: string; value: string; traceback: string } | null;
  files: ExecutionFiles;
  artifacts: unknown[];
  durationMs: number;
  cpuMs?: number | null;
}
