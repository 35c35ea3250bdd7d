import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import type { EgressConnectionRecord } from '../proxy/egress-types.js';
import { EgressConnectionEntity } from './egress-connection.entity.js';
import type { DailyEgress, EgressLogEntry, EgressLogFilter, EgressLogRepository } from './egress-log.repository.js';

const FOREIGN_KEY_VIOLATION = '23503';

function entryOf(e: EgressConnectionEntity): EgressLogEntry {
  return {
    id: String(e.id),
    tenantId: e.tenantId,
    sessionId: e.sessionId,
    batchId: e.batchId,
    batchItem: e.batchItem,
    workerId: e.workerId,
    host: e.host,
    port: e.port,
    address: e.address,
    verdict: e.verdict,
    reason: e.reason,
    rule: e.rule,
    bytesIn: Number(e.bytesIn),
    bytesOut: Number(e.bytesOut),
    startedAt: e.startedAt,
    durationMs: e.durationMs,
  };
}

@Injectable()
export class TypeOrmEgressLogRepository implements EgressLogRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async append(records: readonly EgressConnectionRecord[]): Promise<void> {
    if (records.length === 0) return;
    const rows = records.map((r) => ({ ...r, bytesIn: String(r.bytesIn), bytesOut: String(r.bytesOut) }));
    try {
      await this.db.getRepository(EgressConnectionEntity).insert(rows);
    } catch (error) {
      // A tenant deleted meanwhile: keep the others' rows.
      if ((error as { code?: string }).code !== FOREIGN_KEY_VIOLATION || rows.length === 1) {
        if ((error as { code?: string }).code === FOREIGN_KEY_VIOLATION) return;
        throw error;
      }
      for (const row of rows) {
        await this.db
          .getRepository(EgressConnectionEntity)
          .insert(row)
          .catch((e: { code?: string }) => {
            if (e.code !== FOREIGN_KEY_VIOLATION) throw e;
          });
      }
    }
  }

  async list(filter: EgressLogFilter): Promise<EgressLogEntry[]> {
    const q = this.db.getRepository(EgressConnectionEntity).createQueryBuilder('c');
    if (filter.tenantId) q.andWhere('c.tenant_id = :tenantId', { tenantId: filter.tenantId });
    if (filter.sessionId) q.andWhere('c.session_id = :sessionId', { sessionId: filter.sessionId });
    if (filter.batchId) q.andWhere('c.batch_id = :batchId', { batchId: filter.batchId });
    if (filter.verdict) q.andWhere('c.verdict = :verdict', { verdict: filter.verdict });
    if (filter.from) q.andWhere('c.started_at >= :from', { from: filter.from });
    if (filter.to) q.andWhere('c.started_at < :to', { to: filter.to });
    if (filter.before) q.andWhere('c.id < :before', { before: filter.before });
    const rows = await q.orderBy('c.id', 'DESC').limit(filter.limit).getMany();
    return rows.map(entryOf);
  }

  async daily(from: Date, to: Date, tenantId: string | null): Promise<DailyEgress[]> {
    const rows: { tenant_id: string; day: string; bytes_in: string; bytes_out: string; allowed: string; denied: string }[] = await this.db.query(
      `SELECT tenant_id, to_char((started_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day,
              coalesce(sum(bytes_in), 0) AS bytes_in, coalesce(sum(bytes_out), 0) AS bytes_out,
              count(*) FILTER (WHERE verdict = 'allowed') AS allowed, count(*) FILTER (WHERE verdict = 'denied') AS denied
         FROM egress_connections
        WHERE started_at >= $1 AND started_at < $2 AND ($3::text IS NULL OR tenant_id = $3)
        GROUP BY 1, 2
        ORDER BY 1, 2`,
      [from, to, tenantId],
    );
    return rows.map((r) => ({
      tenantId: r.tenant_id,
      day: r.day,
      bytesIn: Number(r.bytes_in),
      bytesOut: Number(r.bytes_out),
      allowed: Number(r.allowed),
      denied: Number(r.denied),
    }));
  }

  async prune(before: Date, limit: number): Promise<number> {
    const rows: unknown[] = await this.db.query(
      `DELETE FROM egress_connections WHERE id IN (SELECT id FROM egress_connections WHERE started_at < $1 ORDER BY started_at LIMIT $2) RETURNING id`,
      [before, limit],
    );
    return rows.length;
  }
}
