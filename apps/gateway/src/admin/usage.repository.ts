import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';

export interface DailyUsage {
  tenantId: string;
  // UTC day, YYYY-MM-DD.
  day: string;
  executions: { count: number; cpuSeconds: number; wallSeconds: number };
  batchItems: { count: number; cpuSeconds: number; wallSeconds: number };
  // Bytes through the egress proxy that day (docs/network.md).
  egress: { bytesIn: number; bytesOut: number };
}

export interface StoredUsage {
  tenantId: string;
  threadFileBytes: number;
  artifactBytes: number;
  artifactCount: number;
}

// What tenants used, for operators (GET /admin/usage): executions (by creation day) and
// finished batch items (by finishing day), with the CPU time the sandboxes' cgroup
// counters measured and the wall time of the runs; and what each stores now.
@Injectable()
export class UsageRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async daily(from: Date, to: Date, tenantId: string | null): Promise<DailyUsage[]> {
    const rows: {
      tenant_id: string;
      day: string;
      e_count: string;
      e_cpu: number;
      e_wall: number;
      b_count: string;
      b_cpu: number;
      b_wall: number;
    }[] = await this.db.query(
      `WITH e AS (
         SELECT tenant_id, (created_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n,
                coalesce(sum(cpu_ms), 0) / 1000.0 AS cpu, coalesce(sum(duration_ms), 0) / 1000.0 AS wall
           FROM executions
          WHERE created_at >= $1 AND created_at < $2 AND ($3::text IS NULL OR tenant_id = $3)
          GROUP BY 1, 2
       ), b AS (
         SELECT tenant_id, (finished_at AT TIME ZONE 'UTC')::date AS day, count(*) AS n,
                coalesce(sum(cpu_ms), 0) / 1000.0 AS cpu, coalesce(sum(duration_ms), 0) / 1000.0 AS wall
           FROM batch_items
          WHERE finished_at >= $1 AND finished_at < $2 AND status <> 'cancelled' AND ($3::text IS NULL OR tenant_id = $3)
          GROUP BY 1, 2
       )
       SELECT coalesce(e.tenant_id, b.tenant_id) AS tenant_id, to_char(coalesce(e.day, b.day), 'YYYY-MM-DD') AS day,
              coalesce(e.n, 0) AS e_count, coalesce(e.cpu, 0)::float8 AS e_cpu, coalesce(e.wall, 0)::float8 AS e_wall,
              coalesce(b.n, 0) AS b_count, coalesce(b.cpu, 0)::float8 AS b_cpu, coalesce(b.wall, 0)::float8 AS b_wall
         FROM e FULL JOIN b ON b.tenant_id = e.tenant_id AND b.day = e.day
        ORDER BY 1, 2`,
      [from, to, tenantId],
    );
    const round = (x: number) => Math.round(x * 1000) / 1000;
    const egress: { tenant_id: string; day: string; bytes_in: string; bytes_out: string }[] = await this.db.query(
      `SELECT tenant_id, to_char((started_at AT TIME ZONE 'UTC')::date, 'YYYY-MM-DD') AS day,
              coalesce(sum(bytes_in), 0) AS bytes_in, coalesce(sum(bytes_out), 0) AS bytes_out
         FROM egress_connections
        WHERE started_at >= $1 AND started_at < $2 AND ($3::text IS NULL OR tenant_id = $3)
        GROUP BY 1, 2`,
      [from, to, tenantId],
    );
    const days = new Map<string, DailyUsage>();
    const key = (tenant: string, day: string) => `${tenant}|${day}`;
    for (const r of rows) {
      days.set(key(r.tenant_id, r.day), {
        tenantId: r.tenant_id,
        day: r.day,
        executions: { count: Number(r.e_count), cpuSeconds: round(r.e_cpu), wallSeconds: round(r.e_wall) },
        batchItems: { count: Number(r.b_count), cpuSeconds: round(r.b_cpu), wallSeconds: round(r.b_wall) },
        egress: { bytesIn: 0, bytesOut: 0 },
      });
    }
    for (const g of egress) {
      const day = days.get(key(g.tenant_id, g.day)) ?? {
        tenantId: g.tenant_id,
        day: g.day,
        executions: { count: 0, cpuSeconds: 0, wallSeconds: 0 },
        batchItems: { count: 0, cpuSeconds: 0, wallSeconds: 0 },
        egress: { bytesIn: 0, bytesOut: 0 },
      };
      day.egress = { bytesIn: Number(g.bytes_in), bytesOut: Number(g.bytes_out) };
      days.set(key(g.tenant_id, g.day), day);
    }
    return [...days.values()].sort((a, b) => (a.tenantId === b.tenantId ? (a.day < b.day ? -1 : 1) : a.tenantId < b.tenantId ? -1 : 1));
  }

  async stored(tenantId: string | null): Promise<StoredUsage[]> {
    const rows: { id: string; files: string | null; artifact_bytes: string | null; artifact_count: string | null }[] = await this.db.query(
      `SELECT t.id, s.bytes AS files, a.bytes AS artifact_bytes, a.count AS artifact_count
         FROM tenants t
         LEFT JOIN tenant_storage s ON s.tenant_id = t.id
         LEFT JOIN artifact_usage a ON a.tenant_id = t.id
        WHERE $1::text IS NULL OR t.id = $1
        ORDER BY t.id`,
      [tenantId],
    );
    return rows.map((r) => ({
      tenantId: r.id,
      threadFileBytes: Number(r.files ?? 0),
      artifactBytes: Number(r.artifact_bytes ?? 0),
      artifactCount: Number(r.artifact_count ?? 0),
    }));
  }
}
