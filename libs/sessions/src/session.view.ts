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
  // The isolation tier it runs on (docs/sessions.md).
  tier: SessionRecord['tier'];
  // Since when it is hibernated; null when it is not.
  hibernatedAt: string | null;
  // What it comes to when idle; null: the deployment's SESSION_IDLE_ACTION.
  idleAction: SessionRecord['idleAction'];
  createdAt: string;
  lastUsedAt: string;
  expiresAt: string | null;
  endedAt: string | null;
  endReason: string | null;
}

// `idleMs`: how long an unused live session lasts; `hibernatedRetentionMs`, a hibernated one.
export function toSessionView(record: SessionRecord, idleMs: number, hibernatedRetentionMs = idleMs): SessionView {
  const lastUsed = new Date(record.lastUsedAt);
  const lasts = record.status === 'hibernated' ? hibernatedRetentionMs : idleMs;
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
    tier: record.tier ?? 'runc',
    hibernatedAt: record.status === 'hibernated' && record.hibernatedAt ? new Date(record.hibernatedAt).toISOString() : null,
    idleAction: record.idleAction ?? null,
    createdAt: new Date(record.createdAt).toISOString(),
    lastUsedAt: lastUsed.toISOString(),
    expiresAt: record.status === 'ended' ? null : new Date(lastUsed.getTime() + lasts).toISOString(),
    endedAt: record.endedAt ? new Date(record.endedAt).toISOString() : null,
    endReason: record.endReason,
  };
}
