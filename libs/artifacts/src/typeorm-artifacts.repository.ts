import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type QueryRunner } from 'typeorm';
import { assertTenant } from '@drydock/core';
import type { ArtifactRecord, ArtifactsRepository, NewArtifact } from './artifacts.repository.js';

const COLUMNS = `id, tenant_id, thread_id, session_id, execution_id, name, path, size, mime, sha256, created_at, expires_at`;

interface ArtifactRow {
  id: string;
  tenant_id: string;
  thread_id: string;
  session_id: string | null;
  execution_id: string | null;
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

  async create(tenantId: string, a: NewArtifact, commitBlob: () => Promise<void>): Promise<ArtifactRecord> {
    assertTenant(tenantId);
    return this.transaction(async (qr) => {
      // Takes (or creates) the blob row and its lock: a collection of this content waits
      // for this transaction, or this one waits for it and then stores the bytes anew.
      await qr.query(
        `INSERT INTO artifact_blobs (sha256, size) VALUES ($1, $2)
         ON CONFLICT (sha256) DO UPDATE SET size = EXCLUDED.size`,
        [a.sha256, a.size],
      );
      await commitBlob();
      const rows: ArtifactRow[] = await qr.query(
        `INSERT INTO artifacts (id, tenant_id, thread_id, session_id, execution_id, name, path, size, mime, sha256, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9, $10, $11)
         RETURNING ${COLUMNS}`,
        [a.id, tenantId, a.threadId, a.sessionId, a.executionId, a.name, a.path, a.size, a.mime, a.sha256, a.expiresAt],
      );
      return toRecord(rows[0]!);
    });
  }

  async findById(tenantId: string, id: string): Promise<ArtifactRecord | null> {
    assertTenant(tenantId);
    const rows: ArtifactRow[] = await this.db.query(`SELECT ${COLUMNS} FROM artifacts WHERE tenant_id = $1 AND id = $2`, [
      tenantId,
      id,
    ]);
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async list(tenantId: string, filter: { threadId?: string; limit: number }): Promise<ArtifactRecord[]> {
    assertTenant(tenantId);
    const rows: ArtifactRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM artifacts
        WHERE tenant_id = $1 AND ($2::text IS NULL OR thread_id = $2)
        ORDER BY created_at DESC, id DESC LIMIT $3`,
      [tenantId, filter.threadId ?? null, filter.limit],
    );
    return rows.map(toRecord);
  }

  async delete(tenantId: string, id: string): Promise<ArtifactRecord | null> {
    assertTenant(tenantId);
    const [rows]: [ArtifactRow[], number] = await this.db.query(
      `DELETE FROM artifacts WHERE tenant_id = $1 AND id = $2 RETURNING ${COLUMNS}`,
      [tenantId, id],
    );
    return rows[0] ? toRecord(rows[0]) : null;
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

  private async transaction<T>(work: (qr: QueryRunner) => Promise<T>): Promise<T> {
    const qr = this.db.createQueryRunner();
    await qr.connect();
    try {
      await qr.startTransaction();
      const result = await work(qr);
      await qr.commitTransaction();
      return result;
    } catch (error) {
      if (qr.isTransactionActive) await qr.rollbackTransaction();
      throw error;
    } finally {
      await qr.release();
    }
  }
}
