import type { BatchCounts, BatchItemRecord, BatchRecord } from './batch.types.js';

export interface BatchView {
  id: string;
  status: BatchRecord['status'];
  total: number;
  counts: BatchCounts;
  concurrency: number;
  timeoutMs: number;
  limits: BatchRecord['limits'];
  template: string | null;
  network: BatchRecord['network'];
  createdAt: string;
  startedAt: string | null;
  finishedAt: string | null;
  metadata: Record<string, unknown> | null;
}

export function toBatchView(record: BatchRecord): BatchView {
  return {
    id: record.id,
    status: record.status,
    total: record.total,
    counts: record.counts,
    concurrency: record.concurrency,
    timeoutMs: record.timeoutMs,
    limits: record.limits,
    template: record.template,
    network: record.network ?? null,
    createdAt: record.createdAt.toISOString(),
    startedAt: record.startedAt?.toISOString() ?? null,
    finishedAt: record.finishedAt?.toISOString() ?? null,
    metadata: record.metadata,
  };
}

export interface BatchItemView {
  index: number;
  id: string | null;
  status: Exclude<BatchItemRecord['status'], 'admitted'>;
  attempts: number;
  stdout: string | null;
  stderr: string | null;
  truncated: boolean | null;
  result: BatchItemRecord['result'];
  error: BatchItemRecord['error'];
  files: BatchItemRecord['files'];
  artifacts: unknown[];
  durationMs: number | null;
  startedAt: string | null;
  finishedAt: string | null;
}

export function toBatchItemView(item: BatchItemRecord): BatchItemView {
  return {
    index: item.index,
    id: item.clientId,
    // In the run queue or not, an item that has not started is queued to the client.
    status: item.status === 'admitted' ? 'queued' : item.status,
    attempts: item.attempts,
    stdout: item.stdout,
    stderr: item.stderr,
    truncated: item.truncated,
    result: item.result,
    error: item.error,
    files: item.files,
    artifacts: item.artifacts ?? [],
    durationMs: item.durationMs,
    startedAt: item.startedAt?.toISOString() ?? null,
    finishedAt: item.finishedAt?.toISOString() ?? null,
  };
}
