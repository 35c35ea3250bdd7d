import type { SandboxTier } from '@drydock/core';
import type { EffectiveLimits, ExecutionRecord, SessionDataset, SessionNetwork } from '@drydock/execution';
import type { SessionEntity, SessionIdleAction, SessionStatus, SessionStorage } from './session.entity.js';

export type SessionRecord = SessionEntity;

export interface NewSession {
  id: string;
  threadId: string;
  workerId: string;
  limits: EffectiveLimits;
  storage: SessionStorage;
  datasets: SessionDataset[];
  // The template version ("name:version") and its image; null: the platform's image.
  template: string | null;
  image: string | null;
  network: SessionNetwork | null;
  tier: SandboxTier;
  // A fork: the snapshot its sandbox is restored from (the session starts hibernated).
  resumeFrom?: string;
  // null: the deployment's SESSION_IDLE_ACTION.
  idleAction?: SessionIdleAction | null;
}

// Why a checkpoint was not recorded: the session ended meanwhile, or the tenant's
// snapshots are at their count or byte quota.
export type CheckpointRefusal = 'ended' | 'count' | 'bytes';

// A session's sandbox saved by a checkpoint (decision 018): a hibernation (restored by
// the session's next job, then deleted) or a snapshot (kept until it expires, forked
// from). The bytes are a blob of the artifact store, compressed, named by their SHA-256.
export interface NewCheckpoint {
  id: string;
  sessionId: string;
  kind: 'hibernation' | 'snapshot';
  sha256: string;
  sizeBytes: number;
  tier: SandboxTier;
  // The session's template image; null: the platform's image.
  image: string | null;
  expiresAt: Date | null;
}

export interface CheckpointRecord extends NewCheckpoint {
  tenantId: string;
  createdAt: Date;
}

// An execution to record on a session, in the same round trip as reading it.
export interface SessionExecutionDraft {
  id: string;
  kind: 'code' | 'command';
  background: boolean;
  code: string;
  codeSha256: string;
  idempotencyKey: string | null;
  // The run's timeout: the requested one, else the session's, capped at `maxTimeoutMs`.
  requestedTimeoutMs: number | null;
  maxTimeoutMs: number;
}

export interface SessionsRepository {
  // The execution hot path in one statement: reads the session and, when it is
  // `starting` or `ready`, inserts the queued execution on it, or returns the existing
  // one when the tenant already used the idempotency key (`created: false`).
  // `execution` is null when the session is missing or not in one of those states.
  // `threadRevision` is the thread's file revision in the same snapshot (0 for a thread
  // without files): the worker skips its own revision lookup when it already holds it.
  findWithNewExecution(
    tenantId: string,
    sessionId: string,
    draft: SessionExecutionDraft,
  ): Promise<{ session: SessionRecord | null; execution: { record: ExecutionRecord; created: boolean } | null; threadRevision?: number }>;
  // Inserts a starting session, unless the thread already has a live one, which is
  // returned instead (`created: false`).
  createOrGetLive(tenantId: string, session: NewSession): Promise<{ record: SessionRecord; created: boolean }>;
  findById(tenantId: string, sessionId: string): Promise<SessionRecord | null>;
  list(tenantId: string, options: { includeEnded: boolean; limit: number }): Promise<SessionRecord[]>;
  countLive(tenantId: string): Promise<number>;
  setStatus(tenantId: string, sessionId: string, status: SessionStatus): Promise<void>;
  // Adds a dataset to a live session's list (once per name); false if it has ended.
  addDataset(tenantId: string, sessionId: string, dataset: SessionDataset): Promise<boolean>;
  // Replaces a live session's network policy; false if it has ended.
  setNetwork(tenantId: string, sessionId: string, network: SessionNetwork): Promise<boolean>;
  moveToWorker(tenantId: string, sessionId: string, workerId: string): Promise<void>;
  // Ends a live session; its hibernation checkpoint, if any, goes with it.
  end(tenantId: string, sessionId: string, reason: string): Promise<void>;
  // Records a session's stored checkpoint and, for a hibernation, marks the session
  // hibernated (no container), in one transaction that holds the blob's row lock while
  // `commitBlob` makes the bytes readable (so a collection cannot take them between).
  // False, and nothing recorded, when the session ended meanwhile.
  // A snapshot is counted against `quota` (the tenant's snapshots, count and bytes) under
  // a lock on the tenant, so two at once cannot both pass it.
  recordCheckpoint(
    tenantId: string,
    checkpoint: NewCheckpoint,
    commitBlob: () => Promise<void>,
    quota?: { maxCount: number; maxBytes: number },
  ): Promise<CheckpointRefusal | null>;
  findCheckpoint(tenantId: string, checkpointId: string): Promise<CheckpointRecord | null>;
  // The tenant's snapshots not expired at `now`, newest first.
  listSnapshots(tenantId: string, now: Date, limit: number): Promise<CheckpointRecord[]>;
  // The tenant's snapshots' count and bytes (expired ones not yet swept included).
  snapshotUsage(tenantId: string): Promise<{ count: number; bytes: number }>;
  // Deletes one of the tenant's snapshots (its blob goes to the collection); false when
  // there is none.
  deleteSnapshot(tenantId: string, checkpointId: string): Promise<boolean>;
  // Deletes snapshots expired at `now`, across tenants; how many.
  deleteExpiredSnapshots(now: Date): Promise<number>;
  // Ends the hibernated sessions unused since `before` (their checkpoints go); their ids.
  endHibernatedBefore(before: Date): Promise<string[]>;
  // Worker-side bookkeeping. The session is `ready` on that container; a hibernation it
  // resumed from is deleted (its blob left to the artifact store's collection).
  recordContainer(tenantId: string, sessionId: string, containerId: string): Promise<void>;
  touch(tenantId: string, sessionId: string): Promise<void>;
  // Records activity of many sessions at once (the worker batches it off the hot path).
  touchMany(sessionIds: string[]): Promise<void>;
  // Operator views and maintenance, across tenants by design.
  listAllLive(limit: number): Promise<SessionRecord[]>;
  findAnyById(sessionId: string): Promise<SessionRecord | null>;
  listLiveOnWorker(workerId: string): Promise<SessionRecord[]>;
  markWorkerSessionsLost(workerId: string): Promise<number>;
  // Ends live sessions whose worker is not among `liveWorkerIds` and which nobody used
  // since `idleBefore` (not hibernated ones: any worker resumes them); returns their ids.
  endAbandoned(liveWorkerIds: string[], idleBefore: Date): Promise<string[]>;
}

export const SESSIONS_REPOSITORY = Symbol('SESSIONS_REPOSITORY');
