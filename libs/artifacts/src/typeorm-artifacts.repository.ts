import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type QueryRunner } from 'typeorm';
import { assertTenant } from '@drydock/core';
import { ArtifactQuotaExceededError } from './artifacts.errors.js';
import type { StoredBlob } from './blob-store.js';
import type {
  ArtifactCreated,
  ArtifactQuota,
  ArtifactRecord,
  ArtifactsRepository,
  ArtifactUsage,
  NewArtifact,
} from './artifacts.repository.js';

const COLUMNS = `id, tenant_id, thread_id, session_id, execution_id, batch_id, batch_item, name, path, size, mime, sha256,
  created_at, expires_at`;
// Expired artifacts are gone for readers the moment they expire, before the expiry job
// deletes their rows.
const LIVE = `(expires_at IS NULL OR expires_at > now())`;

interface ArtifactRow {
  id: string;
  tenant_id: string;
  thread_id: string | null;
  session_id: string | null;
  execution_id: string | null;
  batch_id: string | null;
  batch_item: number | null;
  name: string;
  path: string;
  size: string;
  mime: string;
  sha256: string;
  created_at: Date;
  expires_at: Date | null;
}

function toRecord(row: ArtifactRow): ArtifactRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    threadId: row.thread_id,
    sessionId: row.session_id,
    executionId: row.execution_id,
    batchId: row.batch_id,
    batchItem: row.batch_item,
    name: row.name,
    path: row.path,
    size: Number(row.size),
    mime: row.mime,
    sha256: row.sha256,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

@Injectable()
export class TypeOrmArtifactsRepository implements ArtifactsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async createMany(
    tenantId: string,
    artifacts: NewArtifact[],
    commitBlob: (index: number) => Promise<void>,
    quota?: ArtifactQuota,
  ): Promise<ArtifactCreated[]> {
    assertTenant(tenantId);
    if (artifacts.length === 0) return [];
    return this.transaction(async (qr) => {
      // The tenant's usage row, created if missing and locked in one statement (the no-op
      // update takes the row lock as FOR UPDATE would): its ingests pass the quota check
      // one group at a time.
      const [usage]: { count: string; bytes: string }[] = await qr.query(
        `INSERT INTO artifact_usage (tenant_id) VALUES ($1)
         ON CONFLICT (tenant_id) DO UPDATE SET count = artifact_usage.count
         RETURNING count, bytes`,
        [tenantId],
      );
      // In order, as if each were stored alone: a file past the quota is refused and the
      // ones after it may still fit.
      let count = Number(usage!.count);
      let bytes = Number(usage!.bytes);
      const results: (ArtifactCreated | undefined)[] = [];
      const taken: number[] = [];
      for (const [index, a] of artifacts.entries()) {
        if (quota && count + 1 > quota.maxCount) results.push(new ArtifactQuotaExceededError('count', quota.maxCount));
        else if (quota && bytes + a.size > quota.maxBytes) results.push(new ArtifactQuotaExceededError('bytes', quota.maxBytes));
        else {
          count += 1;
          bytes += a.size;
          taken.push(index);
          results.push(undefined);
        }
      }
      if (taken.length === 0) return results as ArtifactCreated[];
      // One staged copy per content; the others of the same content are dropped by the caller.
      const firstOf = new Map<string, number>();
      for (const index of taken) if (!firstOf.has(artifacts[index]!.sha256)) firstOf.set(artifacts[index]!.sha256, index);
      const contents = [...firstOf.keys()].sort();
      // Takes (or creates) the blob rows and their locks, in hash order so that two
      // groups sharing content cannot deadlock: a collection of this content waits for
      // this transaction, or this one waits for it and then stores the bytes anew.
      await qr.query(
        `INSERT INTO artifact_blobs (sha256, size)
         SELECT sha256, size FROM unnest($1::text[], $2::bigint[]) AS t(sha256, size) ORDER BY sha256
         ON CONFLICT (sha256) DO UPDATE SET size = EXCLUDED.size`,
        [contents, contents.map((sha) => artifacts[firstOf.get(sha)!]!.size)],
      );
      // Under those locks the bytes become readable, every time: a blob row that exists
      // may have lost its bytes to a collection whose transaction then failed. Each
      // content's own lock is held, so they are committed side by side (each waits for
      // its folder to reach the disk); a failure is thrown once all have settled.
      const commits = await Promise.allSettled(contents.map((sha) => commitBlob(firstOf.get(sha)!)));
      const failed = commits.find((c): c is PromiseRejectedResult => c.status === 'rejected');
      if (failed) throw failed.reason;
      const rows = taken.map((index) => artifacts[index]!);
      const col = <K extends keyof NewArtifact>(key: K) => rows.map((a) => a[key]);
      // clock_timestamp(): each row its own time, in the order given, as when each file
      // had its own transaction (lists are newest first).
      const inserted: ArtifactRow[] = await qr.query(
        `INSERT INTO artifacts (id, tenant_id, thread_id, session_id, execution_id, batch_id, batch_item, name, path, size, mime,
                                sha256, expires_at, created_at)
         SELECT t.id, $1, t.thread_id, t.session_id, t.execution_id, t.batch_id, t.batch_item, t.name, t.path, t.size, t.mime,
                t.sha256, t.expires_at, clock_timestamp()
           FROM unnest($2::text[], $3::text[], $4::text[], $5::text[], $6::text[], $7::int[], $8::text[], $9::text[],
                       $10::bigint[], $11::text[], $12::text[], $13::timestamptz[]) WITH ORDINALITY
                AS t(id, thread_id, session_id, execution_id, batch_id, batch_item, name, path, size, mime, sha256, expires_at, n)
          ORDER BY t.n
         RETURNING ${COLUMNS}`,
        [
          tenantId,
          col('id'),
          col('threadId'),
          col('sessionId'),
          col('executionId'),
          col('batchId'),
          col('batchItem'),
          col('name'),
          col('path'),
          col('size'),
          col('mime'),
          col('sha256'),
          col('expiresAt'),
        ],
      );
      await qr.query(`UPDATE artifact_usage SET count = count + $2, bytes = bytes + $3 WHERE tenant_id = $1`, [
        tenantId,
        rows.length,
        rows.reduce((sum, a) => sum + a.size, 0),
      ]);
      const byId = new Map(inserted.map((row) => [row.id, toRecord(row)]));
      for (const index of taken) results[index] = byId.get(artifacts[index]!.id)!;
      return results as ArtifactCreated[];
    });
  }

  async usage(tenantId: string): Promise<ArtifactUsage> {
    assertTenant(tenantId);
    const rows: { count: string; bytes: string }[] = await this.db.query(
      `SELECT count, bytes FROM artifact_usage WHERE tenant_id = $1`,
      [tenantId],
    );
    return { count: Number(rows[0]?.count ?? 0), bytes: Number(rows[0]?.bytes ?? 0) };
  }

  async findById(tenantId: string, id: string): Promise<ArtifactRecord | null> {
    assertTenant(tenantId);
    const rows: ArtifactRow[] = await this.db.query(`SELECT ${COLUMNS} FROM artifacts WHERE tenant_id = $1 AND id = $2 AND ${LIVE}`, [
      tenantId,
      id,
    ]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async list(tenantId: string, filter: { threadId?: string; batchId?: string; limit: number }): Promise<ArtifactRecord[]> {
    assertTenant(tenantId);
    const rows: ArtifactRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM artifacts
        WHERE tenant_id = $1 AND ($2::text IS NULL OR thread_id = $2) AND ($4::text IS NULL OR batch_id = $4) AND ${LIVE}
        ORDER BY created_at DESC, id DESC LIMIT $3`,
      [tenantId, filter.threadId ?? null, filter.limit, filter.batchId ?? null],
    );
    return rows.map(toRecord);
  }

  async delete(tenantId: string, id: string): Promise<ArtifactRecord | null> {
    assertTenant(tenantId);
    // An expired artifact is already gone for its tenant; the expiry job removes it.
    const rows: ArtifactRow[] = await this.db.query(
      `WITH gone AS (
         DELETE FROM artifacts WHERE tenant_id = $1 AND id = $2 AND ${LIVE} RETURNING ${COLUMNS}
       ), counted AS (
         UPDATE artifact_usage u SET count = u.count - 1, bytes = u.bytes - gone.size
           FROM gone WHERE u.tenant_id = gone.tenant_id
       )
       SELECT * FROM gone`,
      [tenantId, id],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async deleteExpired(now: Date, limit: number): Promise<{ deleted: number; sha256s: string[] }> {
    // SKIP LOCKED: two workers running the job at once take different rows.
    const rows: { sha256: string; n: string }[] = await this.db.query(
      `WITH gone AS (
         DELETE FROM artifacts WHERE id IN (
           SELECT id FROM artifacts WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED
         ) RETURNING tenant_id, size, sha256
       ), counted AS (
         UPDATE artifact_usage u SET count = u.count - g.n, bytes = u.bytes - g.b
           FROM (SELECT tenant_id, count(*) AS n, sum(size) AS b FROM gone GROUP BY tenant_id) g
          WHERE u.tenant_id = g.tenant_id
       )
       SELECT sha256, count(*) AS n FROM gone GROUP BY sha256`,
      [now, limit],
    );
    return { deleted: rows.reduce((sum, r) => sum + Number(r.n), 0), sha256s: rows.map((r) => r.sha256) };
  }

  async collectGarbage(
    removeBlob: (sha256: string) => Promise<void>,
    options: { sha256s?: string[]; limit: number },
  ): Promise<string[]> {
    return this.transaction(async (qr) => {
      // SKIP LOCKED: a blob whose row an ingest holds is in use (or about to be).
      const rows: { sha256: string }[] = await qr.query(
        `SELECT b.sha256 FROM artifact_blobs b
          WHERE ($1::text[] IS NULL OR b.sha256 = ANY($1::text[]))
            AND NOT EXISTS (SELECT 1 FROM artifacts a WHERE a.sha256 = b.sha256)
            -- Sessions' checkpoints are blobs of this store too (libs/sessions).
            AND NOT EXISTS (SELECT 1 FROM session_checkpoints c WHERE c.sha256 = b.sha256)
          ORDER BY b.created_at
          LIMIT $2
          FOR UPDATE SKIP LOCKED`,
        [options.sha256s ?? null, options.limit],
      );
      const removed: string[] = [];
      for (const { sha256 } of rows) {
        // The bytes go first, under the lock: should the transaction then fail, the row
        // stays and the next ingest of this content stores the bytes again.
        await removeBlob(sha256);
        removed.push(sha256);
      }
      if (removed.length > 0) await qr.query(`DELETE FROM artifact_blobs WHERE sha256 = ANY($1::text[])`, [removed]);
      return removed;
    });
  }

  async adoptStrayBlobs(blobs: StoredBlob[]): Promise<string[]> {
    if (blobs.length === 0) return [];
    // NOT EXISTS passes over the recorded ones without a lock; ON CONFLICT waits for an
    // ingest whose row is not committed yet, and then leaves its row alone.
    const rows: { sha256: string }[] = await this.db.query(
      `INSERT INTO artifact_blobs (sha256, size)
       SELECT t.sha256, t.size FROM unnest($1::text[], $2::bigint[]) AS t(sha256, size)
        WHERE NOT EXISTS (SELECT 1 FROM artifact_blobs b WHERE b.sha256 = t.sha256)
        ORDER BY t.sha256
       ON CONFLICT (sha256) DO NOTHING
       RETURNING sha256`,
      [blobs.map((b) => b.sha256), blobs.map((b) => b.size)],
    );
    return rows.map((r) => r.sha256);
  }

  // TypeORM's transaction (rolled back on any error, the connection released), worked
  // through its query runner.
  private transaction<T>(work: (qr: QueryRunner) => Promise<T>): Promise<T> {
    return this.db.transaction((manager) => work(manager.queryRunner!));
  }
}
