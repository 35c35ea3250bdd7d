import { Inject, Injectable } from '@nestjs/common';
import { posix } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { APP_CONFIG, type AppConfig, newId, TENANTS_REPOSITORY, type TenantsRepository } from '@drydock/core';
import { detectMime, SNIFF_BYTES } from './artifact-mime.js';
import { ArtifactQuotaExceededError, ArtifactsError } from './artifacts.errors.js';
import {
  ARTIFACTS_REPOSITORY,
  type ArtifactQuota,
  type ArtifactRecord,
  type ArtifactsRepository,
  type ArtifactUsage,
} from './artifacts.repository.js';
import { BLOB_STORE, type BlobStore, type StagedBlob } from './blob-store.js';

// The public shape of an artifact (API.md). `url` is the tenant-authenticated download
// route; signed links come from POST /v1/artifacts/:id/url.
export interface ArtifactDescriptor {
  id: string;
  name: string;
  path: string;
  size: number;
  mime: string;
  sha256: string;
  threadId: string | null;
  sessionId: string | null;
  executionId: string | null;
  // Set for what a batch item produced (then thread, session and execution are null).
  batchId?: string;
  batchItem?: number;
  createdAt: string;
  // When the retention period deletes it; null when it is kept until deleted.
  expiresAt: string | null;
  url: string;
}

// A file staged for `ArtifactsService.store`: its bytes wait in the blob store.
export interface StagedArtifact {
  path: string;
  name: string;
  mime: string;
  blob: StagedBlob;
}

// What a tenant may store, resolved from its limits and the platform defaults.
export interface ArtifactPolicy extends ArtifactQuota {
  retentionSeconds: number;
}

// Where an artifact came from: an execution in a thread's session, or a batch item.
export type ArtifactLineage =
  | { threadId: string; sessionId: string | null; executionId: string | null }
  | { batchId: string; batchItem: number };

export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;
// Blobs examined per garbage-collection pass; expired artifacts deleted per pass.
const GC_BATCH = 500;
const EXPIRY_BATCH = 1000;
// A staged copy untouched this long belongs to no live ingest (one stages and commits
// within its run's listing), so the retention job removes it.
export const STAGING_ABANDONED_AFTER_MS = 6 * 3600 * 1000;
// Bytes in the store that no blob row names (an ingest committed them, then its
// transaction failed or its process died) are looked for a slice at a time: this many
// of the 256 first-level folders per retention pass, so a round takes 16 passes.
const STRAY_FOLDERS_PER_PASS = 16;

export function toDescriptor(record: ArtifactRecord): ArtifactDescriptor {
  return {
    id: record.id,
    name: record.name,
    path: record.path,
    size: record.size,
    mime: record.mime,
    sha256: record.sha256,
    threadId: record.threadId,
    sessionId: record.sessionId,
    executionId: record.executionId,
    ...(record.batchId !== null ? { batchId: record.batchId, batchItem: record.batchItem ?? 0 } : {}),
    createdAt: new Date(record.createdAt).toISOString(),
    expiresAt: record.expiresAt ? new Date(record.expiresAt).toISOString() : null,
    url: `/v1/artifacts/${record.id}/content`,
  };
}

// Artifacts: produced files stored once per content (BLOB_STORE) and recorded per
// tenant with their lineage (ARTIFACTS_REPOSITORY). Used by the worker to ingest and by
// the gateway to list, download and delete.
@Injectable()
export class ArtifactsService {
  // The next first-level blob folder the retention job looks through for strays; each
  // worker starts at its own.
  private strayFolder = Math.floor(Math.random() * 256);

  constructor(
    @Inject(ARTIFACTS_REPOSITORY) private readonly artifacts: ArtifactsRepository,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(TENANTS_REPOSITORY) private readonly tenants: TenantsRepository,
  ) {}

  // The tenant's quotas and retention: its own limits, else the platform's defaults.
  async policyOf(tenantId: string): Promise<ArtifactPolicy> {
    const limits = (await this.tenants.findById(tenantId))?.limits ?? {};
    const defaults = this.config.artifacts;
    return {
      maxCount: limits.artifactCount ?? defaults.maxCountPerTenant,
      maxBytes: limits.artifactBytes ?? defaults.maxBytesPerTenant,
      retentionSeconds: limits.artifactRetentionSeconds ?? defaults.retentionSeconds,
    };
  }

  usage(tenantId: string): Promise<ArtifactUsage> {
    return this.artifacts.usage(tenantId);
  }

  // Stores one produced file: its bytes are hashed and capped while they stream
  // (BlobTooLargeError past `maxBytes`), its type sniffed from the first bytes, and it
  // is recorded with its lineage and expiry. Content already stored is kept once. With
  // a policy, an artifact past the tenant's quota throws ArtifactQuotaExceededError and
  // nothing is stored.
  async ingest(
    tenantId: string,
    lineage: ArtifactLineage,
    path: string,
    content: Readable,
    options: { maxBytes?: number; policy?: ArtifactPolicy } = {},
  ): Promise<ArtifactRecord> {
    const policy = options.policy ?? (await this.policyOf(tenantId));
    const staged = await this.stage(path, content, { maxBytes: options.maxBytes });
    const [result] = await this.store(tenantId, lineage, [staged], policy);
    if (result instanceof ArtifactQuotaExceededError) throw result;
    return result!;
  }

  // The first half of an ingest, for files recorded together with `store`: the bytes
  // hashed, capped (BlobTooLargeError) and staged, the type sniffed. `expectedBytes` (a
  // tar header's size) lets a small file be staged in one write.
  async stage(path: string, content: Readable, options: { maxBytes?: number; expectedBytes?: number } = {}): Promise<StagedArtifact> {
    // Content already destroyed emits nothing more: piped, it would never end. A
    // sandbox's file that changed while it was read can fail in the same read of the
    // channel as its header; a Docker archive that breaks closes the entry it was in.
    if (content.destroyed) throw content.errored ?? new Error(`${path}: its bytes were gone before they were read`);
    let head = Buffer.alloc(0);
    const sniff = new Transform({
      transform(chunk: Buffer, _enc, done) {
        if (head.length < SNIFF_BYTES) head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
        done(null, chunk);
      },
    });
    // The blob store reads sniff after a step of its own: a failure of the content before
    // then must not be an 'error' with no listener (it would end the process). The store
    // still fails with it, from sniff's state.
    sniff.on('error', () => undefined);
    content.on('error', (error) => sniff.destroy(error));
    const blob = await this.blobs.stage(content.pipe(sniff), options.maxBytes ?? this.config.artifacts.maxFileBytes, {
      expectedBytes: options.expectedBytes,
    });
    const name = posix.basename(path);
    try {
      return { path, name, mime: await detectMime(name, head), blob };
    } catch (error) {
      await this.blobs.discard(blob);
      throw error;
    }
  }

  // The second half: records staged files in one transaction (one lock of the tenant's
  // usage, one statement per table) and makes their bytes readable. Results are in
  // order: a record, or ArtifactQuotaExceededError for a file the quota refused (the
  // others are stored; the check is the one `ingest` makes, file after file). Every
  // staged copy is gone afterwards, committed or discarded, also when this throws.
  async store(
    tenantId: string,
    lineage: ArtifactLineage,
    staged: StagedArtifact[],
    policy?: ArtifactPolicy,
  ): Promise<(ArtifactRecord | ArtifactQuotaExceededError)[]> {
    const committed = new Set<number>();
    try {
      const resolved = policy ?? (await this.policyOf(tenantId));
      const expiresAt = resolved.retentionSeconds > 0 ? new Date(Date.now() + resolved.retentionSeconds * 1000) : null;
      const columns = lineageColumns(lineage);
      return await this.artifacts.createMany(
        tenantId,
        staged.map((s) => ({
          id: newId('art'),
          ...columns,
          name: s.name,
          path: s.path,
          size: s.blob.size,
          mime: s.mime,
          sha256: s.blob.sha256,
          expiresAt,
        })),
        async (index) => {
          await this.blobs.commit(staged[index]!.blob);
          committed.add(index);
        },
        resolved,
      );
    } finally {
      // Refused files, and the other copies of content committed once.
      await Promise.all(staged.map((s, index) => (committed.has(index) ? undefined : this.blobs.discard(s.blob))));
    }
  }

  // Drops staged files that will not be stored.
  async discard(staged: StagedArtifact[]): Promise<void> {
    await Promise.all(staged.map((s) => this.blobs.discard(s.blob)));
  }

  async get(tenantId: string, id: string): Promise<ArtifactRecord> {
    const record = await this.artifacts.findById(tenantId, id);
    if (!record) throw ArtifactsError.notFound(id);
    return record;
  }

  list(tenantId: string, filter: { threadId?: string; batchId?: string; limit?: number } = {}): Promise<ArtifactRecord[]> {
    const limit = Math.min(MAX_LIST_LIMIT, Math.max(1, filter.limit ?? DEFAULT_LIST_LIMIT));
    return this.artifacts.list(tenantId, { threadId: filter.threadId, batchId: filter.batchId, limit });
  }

  // The bytes of an artifact, whole or [start, end] (inclusive, already validated
  // against its size by the caller).
  async open(tenantId: string, id: string, range?: { start: number; end: number }) {
    const record = await this.get(tenantId, id);
    return { record, stream: this.blobs.open(record.sha256, range) };
  }

  // The reader API for agents and tools: an artifact's bytes, or its text (UTF-8).
  async readBytes(tenantId: string, id: string): Promise<Buffer> {
    const { stream } = await this.open(tenantId, id);
    const chunks: Buffer[] = [];
    for await (const chunk of stream) chunks.push(chunk as Buffer);
    return Buffer.concat(chunks);
  }

  async readText(tenantId: string, id: string): Promise<string> {
    return (await this.readBytes(tenantId, id)).toString('utf8');
  }

  // Deletes the record; its bytes go too unless another artifact (of any tenant)
  // still has the same content.
  async delete(tenantId: string, id: string): Promise<void> {
    const record = await this.artifacts.delete(tenantId, id);
    if (!record) throw ArtifactsError.notFound(id);
    await this.artifacts.collectGarbage((sha) => this.blobs.remove(sha), { sha256s: [record.sha256], limit: 1 });
  }

  // The retention job: deletes every artifact past its expiry, then the content nothing
  // references any more, then staged copies a crashed process left behind and a slice of
  // the store's bytes that no row names (last, so that a folder it cannot read never
  // holds up retention). Safe to run on several workers at once.
  async expire(now = new Date()): Promise<{ artifacts: number; blobs: number; staged: number; strays: number }> {
    let artifacts = 0;
    let blobs = 0;
    for (;;) {
      const { deleted, sha256s } = await this.artifacts.deleteExpired(now, EXPIRY_BATCH);
      artifacts += deleted;
      if (sha256s.length > 0) {
        const removed = await this.artifacts.collectGarbage((sha) => this.blobs.remove(sha), { sha256s, limit: sha256s.length });
        blobs += removed.length;
      }
      if (deleted < EXPIRY_BATCH) break;
    }
    const cutoff = new Date(now.getTime() - STAGING_ABANDONED_AFTER_MS);
    const staged = await this.blobs.sweepStaging(cutoff);
    const folders = Array.from({ length: STRAY_FOLDERS_PER_PASS }, () => (this.strayFolder++ % 256).toString(16).padStart(2, '0'));
    const strays = await this.removeStrayBlobs(cutoff, folders);
    return { artifacts, blobs, staged, strays };
  }

  // Removes the bytes under these first-level folders (two hex digits each) last written
  // before `cutoff` that no blob row names: each gets a row, then goes as unreferenced
  // content does (collectGarbage), unless an ingest of the same content took it
  // meanwhile. Returns how many went.
  async removeStrayBlobs(cutoff: Date, folders: string[]): Promise<number> {
    let removed = 0;
    for (const folder of folders) {
      const stored = await this.blobs.listStored(folder, cutoff);
      for (let at = 0; at < stored.length; at += GC_BATCH) {
        const adopted = await this.artifacts.adoptStrayBlobs(stored.slice(at, at + GC_BATCH));
        if (adopted.length === 0) continue;
        const gone = await this.artifacts.collectGarbage((sha) => this.blobs.remove(sha), { sha256s: adopted, limit: adopted.length });
        removed += gone.length;
      }
    }
    return removed;
  }

  // Removes stored content no artifact references; returns how many blobs went.
  async collectGarbage(): Promise<number> {
    let total = 0;
    for (;;) {
      const removed = await this.artifacts.collectGarbage((sha) => this.blobs.remove(sha), { limit: GC_BATCH });
      total += removed.length;
      if (removed.length < GC_BATCH) return total;
    }
  }
}

function lineageColumns(lineage: ArtifactLineage) {
  if ('batchId' in lineage) {
    return { threadId: null, sessionId: null, executionId: null, batchId: lineage.batchId, batchItem: lineage.batchItem };
  }
  return { ...lineage, batchId: null, batchItem: null };
}
