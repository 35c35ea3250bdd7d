import type { EffectiveLimits } from '@drydock/execution';
import type { SessionRecord } from './sessions.repository.js';

export interface SessionView {
  id: string;
  threadId: string;
  status: SessionRecord['status'];
  workerId: string;
  limits: EffectiveLimits;
  storage: SessionRecord['storage'];
  datasets: SessionRecord['datasets'];
  // The template version it started from ("name:version"); null: the platform's image.
  template: string | null;
  // The hosts its code may reach (docs/network.md); null: no network.
  network: SessionRecord['network'];
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string | null;
  endedAt: string | null;
  endReason: string | null;
}

export function toSessionView(record: SessionRecord, idleMs: number): SessionView {
  const lastUsed = new Date(record.lastUsedAt);
  return {
    id: record.id,
    threadId: record.threadId,
    status: record.status,
    workerId: record.workerId,
    limits: record.limits,
    storage: record.storage,
    datasets: record.datasets ?? [],
    template: record.template ?? null,
    network: record.network ?? null,
    createdAt: new Date(record.createdAt).toISOString(),
    lastUsedAt: lastUsed.toISOString(),
    expiresAt: record.status === 'ended' ? null : new Date(lastUsed.getTime() + idleMs).toISOString(),
    endedAt: record.endedAt ? new Date(record.endedAt).toISOString() : null,
    endReason: record.endReason,
  };
}
