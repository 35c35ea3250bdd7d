import type { ArtifactQuotaExceededError } from './artifacts.errors.js';
import type { StoredBlob } from './blob-store.js';

// The storage port of artifact records. Every method takes the tenant first (except the
// garbage collector, which works on content, not on anyone's rows) and refuses an empty
// one.

export interface ArtifactRecord {
  id: string;
  tenantId: string;
  // A session's artifacts have a thread, session and execution; a batch item's have
  // its batch and index instead.
  threadId: string | null;
  sessionId: string | null;
  executionId: string | null;
  batchId: string | null;
  batchItem: number | null;
  name: string;
  // Where the code wrote it, relative to /session ("/artifacts/plot.png").
  path: string;
  size: number;
  mime: string;
  sha256: string;
  createdAt: Date;
  expiresAt: Date | null;
}

export type NewArtifact = Omit<ArtifactRecord, 'tenantId' | 'createdAt'>;

// A tenant's ceilings on stored artifacts (live rows, by their own size: shared content
// counts for every tenant holding it, so usage never reveals what others store).
export interface ArtifactQuota {
  maxCount: number;
  maxBytes: number;
}

export interface ArtifactUsage {
  count: number;
  bytes: number;
}

// What createMany did with one artifact: its record, or why it was refused.
export type ArtifactCreated = ArtifactRecord | ArtifactQuotaExceededError;

export interface ArtifactsRepository {
  // Inserts artifacts and their blob rows in one transaction, calling `commitBlob(i)`
  // (which makes artifact i's bytes readable under their hash) for one artifact of each
  // stored content while holding that content's blob row lock. With a quota, artifacts
  // are taken in order and one that would take the tenant past it comes back as
  // ArtifactQuotaExceededError (nothing of it stored) while the others are stored; the
  // checks and the inserts hold the tenant's usage row. Results are in input order.
  createMany(
    tenantId: string,
    artifacts: NewArtifact[],
    commitBlob: (index: number) => Promise<void>,
    quota?: ArtifactQuota,
  ): Promise<ArtifactCreated[]>;
  usage(tenantId: string): Promise<ArtifactUsage>;
  // Artifacts past their expiry are hidden from findById and list at once.
  findById(tenantId: string, id: string): Promise<ArtifactRecord | null>;
  // Newest first.
  list(tenantId: string, filter: { threadId?: string; batchId?: string; limit: number }): Promise<ArtifactRecord[]>;
  // The deleted record, or null when there was none.
  delete(tenantId: string, id: string): Promise<ArtifactRecord | null>;
  // Removes blobs no artifact references (only `sha256s` when given), each under its row
  // lock: `removeBlob` runs before the row goes, and a blob being ingested right now is
  // skipped. Returns the removed hashes.
  // Deletes up to `limit` artifacts (of any tenant) whose expiry is at or before `now`;
  // returns the content hashes they referenced, for garbage collection.
  deleteExpired(now: Date, limit: number): Promise<{ deleted: number; sha256s: string[] }>;
  collectGarbage(removeBlob: (sha256: string) => Promise<void>, options: { sha256s?: string[]; limit: number }): Promise<string[]>;
  // Gives a blob row to each of these stored blobs that has none (bytes an ingest
  // committed before its transaction failed, or a process died); returns their hashes,
  // for collectGarbage, which removes them unless an artifact references them by then.
  // An ingest of the same content in progress is waited for.
  adoptStrayBlobs(blobs: StoredBlob[]): Promise<string[]>;
}

export const ARTIFACTS_REPOSITORY = Symbol('ARTIFACTS_REPOSITORY');
