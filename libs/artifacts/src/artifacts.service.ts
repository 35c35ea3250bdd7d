import { Inject, Injectable } from '@nestjs/common';
import { posix } from 'node:path';
import { Transform, type Readable } from 'node:stream';
import { APP_CONFIG, type AppConfig, newId } from '@drydock/core';
import { detectMime, SNIFF_BYTES } from './artifact-mime.js';
import { ArtifactsError } from './artifacts.errors.js';
import { ARTIFACTS_REPOSITORY, type ArtifactRecord, type ArtifactsRepository } from './artifacts.repository.js';
import { BLOB_STORE, type BlobStore } from './blob-store.js';

// The public shape of an artifact (API.md). `url` is the tenant-authenticated download
// route; signed links come from POST /v1/artifacts/:id/url.
export interface ArtifactDescriptor {
  id: string;
  name: string;
  path: string;
  size: number;
  mime: string;
  sha256: string;
  threadId: string;
  sessionId: string | null;
  executionId: string | null;
  createdAt: string;
  url: string;
}

export interface ArtifactLineage {
  threadId: string;
  sessionId: string | null;
  executionId: string | null;
}

export const DEFAULT_LIST_LIMIT = 100;
export const MAX_LIST_LIMIT = 1000;
// Blobs examined per garbage-collection pass.
const GC_BATCH = 500;

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
    createdAt: new Date(record.createdAt).toISOString(),
    url: `/v1/artifacts/${record.id}/content`,
  };
}

// Artifacts: produced files stored once per content (BLOB_STORE) and recorded per
// tenant with their lineage (ARTIFACTS_REPOSITORY). Used by the worker to ingest and by
// the gateway to list, download and delete.
@Injectable()
export class ArtifactsService {
  constructor(
    @Inject(ARTIFACTS_REPOSITORY) private readonly artifacts: ArtifactsRepository,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  // Stores one produced file: its bytes are hashed and capped while they stream
  // (BlobTooLargeError past `maxBytes`), its type sniffed from the first bytes, and it
  // is recorded with its lineage. Content already stored is kept once.
  async ingest(tenantId: string, lineage: ArtifactLineage, path: string, content: Readable, maxBytes?: number): Promise<ArtifactRecord> {
    let head = Buffer.alloc(0);
    const sniff = new Transform({
      transform(chunk: Buffer, _enc, done) {
        if (head.length < SNIFF_BYTES) head = Buffer.concat([head, chunk.subarray(0, SNIFF_BYTES - head.length)]);
        done(null, chunk);
      },
    });
    content.on('error', (error) => sniff.destroy(error));
    const staged = await this.blobs.stage(content.pipe(sniff), maxBytes ?? this.config.artifacts.maxFileBytes);
    const name = posix.basename(path);
    try {
      return await this.artifacts.create(
        tenantId,
        {
          id: newId('art'),
          ...lineage,
          name,
          path,
          size: staged.size,
          mime: await detectMime(name, head),
          sha256: staged.sha256,
          expiresAt: null,
        },
        () => this.blobs.commit(staged),
      );
    } catch (error) {
      await this.blobs.discard(staged);
      throw error;
    }
  }

  async get(tenantId: string, id: string): Promise<ArtifactRecord> {
    const record = await this.artifacts.findById(tenantId, id);
    if (!record) throw ArtifactsError.notFound(id);
    return record;
  }

  list(tenantId: string, filter: { threadId?: string; limit?: number } = {}): Promise<ArtifactRecord[]> {
    const limit = Math.min(MAX_LIST_LIMIT, Math.max(1, filter.limit ?? DEFAULT_LIST_LIMIT));
    return this.artifacts.list(tenantId, { threadId: filter.threadId, limit });
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
