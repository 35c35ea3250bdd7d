import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, newId, TenantsService, type AppConfig } from '@drydock/core';
import { JOB_DISPATCHER, JobName, type JobDispatcher, type SnapshotTaken } from '@drydock/execution';
import { SessionsError } from '../sessions.errors.js';
import { SESSIONS_REPOSITORY, type CheckpointRecord, type SessionsRepository } from '../sessions.repository.js';
import { SessionsService, specOf } from '../sessions.service.js';

// A snapshot of a session as the API shows it (API.md "Hibernate, snapshots and fork").
export interface SnapshotView {
  id: string;
  sessionId: string;
  tier: CheckpointRecord['tier'];
  sizeBytes: number;
  createdAt: string;
  expiresAt: string | null;
}

export function toSnapshotView(record: CheckpointRecord | SnapshotTaken & { tier: CheckpointRecord['tier'] }): SnapshotView {
  const iso = (d: Date | string | null) => (d === null ? null : new Date(d).toISOString());
  return {
    id: record.id,
    sessionId: record.sessionId,
    tier: record.tier,
    sizeBytes: record.sizeBytes,
    createdAt: iso(record.createdAt)!,
    expiresAt: iso(record.expiresAt),
  };
}

// A checkpoint of a live session's sandbox, taken between runs and kept (to expiry) to
// start forks from; the session goes on. Snapshots belong to their tenant and count
// against its quota (SNAPSHOT_MAX_COUNT_PER_TENANT, SNAPSHOT_MAX_BYTES_PER_TENANT, or
// limits.snapshotCount and snapshotBytes).
@Injectable()
export class SnapshotsService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SESSIONS_REPOSITORY) private readonly sessions: SessionsRepository,
    @Inject(JOB_DISPATCHER) private readonly dispatcher: JobDispatcher,
    private readonly sessionsService: SessionsService,
    private readonly tenants: TenantsService,
  ) {}

  async create(tenantId: string, sessionId: string, options: { ttlSeconds?: number } = {}): Promise<SnapshotView> {
    const session = await this.sessionsService.get(tenantId, sessionId);
    if (session.status === 'ended') throw SessionsError.ended(sessionId);
    if (session.tier !== 'gvisor') {
      throw SessionsError.checkpointNotAvailable(sessionId, `it runs on the ${session.tier} tier; only gvisor sessions can be snapshotted (create one with "tier": "gvisor").`);
    }
    const quota = await this.quotaOf(tenantId);
    const usage = await this.sessions.snapshotUsage(tenantId);
    if (usage.count >= quota.maxCount) throw SessionsError.snapshotQuota('count', quota.maxCount);
    if (usage.bytes >= quota.maxBytes) throw SessionsError.snapshotQuota('bytes', quota.maxBytes);
    const ttlSeconds = Math.min(options.ttlSeconds ?? this.config.snapshots.retentionSeconds, this.config.snapshots.retentionSeconds);
    const expiresAt = new Date(Date.now() + ttlSeconds * 1000).toISOString();
    const snapshotId = newId('snp');
    const taken = await this.sessionsService.onItsWorker(await this.sessionsService.ensurePlaced(session), (placed) =>
      this.dispatcher.dispatch(placed.workerId, JobName.SnapshotSession, { session: specOf(placed), snapshotId, expiresAt, quota }, { waitMs: SNAPSHOT_WAIT_MS }),
    );
    return toSnapshotView({ ...(taken as SnapshotTaken), tier: session.tier });
  }

  async list(tenantId: string): Promise<SnapshotView[]> {
    return (await this.sessions.listSnapshots(tenantId, new Date(), 1000)).map(toSnapshotView);
  }

  async get(tenantId: string, snapshotId: string): Promise<SnapshotView> {
    const record = await this.sessions.findCheckpoint(tenantId, snapshotId);
    if (!record || record.kind !== 'snapshot' || (record.expiresAt && record.expiresAt <= new Date())) throw SessionsError.snapshotNotFound(snapshotId);
    return toSnapshotView(record);
  }

  async delete(tenantId: string, snapshotId: string): Promise<void> {
    if (!(await this.sessions.deleteSnapshot(tenantId, snapshotId))) throw SessionsError.snapshotNotFound(snapshotId);
  }

  private async quotaOf(tenantId: string): Promise<{ maxCount: number; maxBytes: number }> {
    const { limits } = await this.tenants.get(tenantId);
    return {
      maxCount: limits.snapshotCount ?? this.config.snapshots.maxCountPerTenant,
      maxBytes: limits.snapshotBytes ?? this.config.snapshots.maxBytesPerTenant,
    };
  }
}

// A checkpoint, compressed and stored, and a restore.
const SNAPSHOT_WAIT_MS = 5 * 60_000;
