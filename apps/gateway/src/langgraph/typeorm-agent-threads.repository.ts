import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { assertTenant, commitWithoutFlushCte } from '@drydock/core';
import { pgPoolOf } from '@drydock/execution';
import { CHECKPOINT_SCHEMA, latestCheckpointSql, type CarriedWrite, type WriteCondition } from '@drydock/agents';
import type {
  AgentThreadRecord,
  AgentThreadSearch,
  AgentThreadsRepository,
  AgentThreadStatus,
  ClaimedThread,
} from './agent-threads.repository.js';

interface AgentThreadRow {
  tenant_id: string;
  thread_id: string;
  metadata: Record<string, unknown>;
  status: AgentThreadStatus;
  run_id: string | null;
  error: AgentThreadRecord['error'];
  created_at: Date;
  updated_at: Date;
}

const COLUMNS = 'tenant_id, thread_id, metadata, status, run_id, error, created_at, updated_at';
const QUALIFIED_COLUMNS = COLUMNS.split(', ').map((column) => `t.${column}`).join(', ');
// Whitelisted: the sort column is interpolated into SQL.
const SORT_COLUMNS: Record<AgentThreadSearch['sortBy'], string> = {
  thread_id: 'thread_id',
  status: 'status',
  created_at: 'created_at',
  updated_at: 'updated_at',
};

function toRecord(row: AgentThreadRow): AgentThreadRecord {
  return {
    tenantId: row.tenant_id,
    threadId: row.thread_id,
    metadata: row.metadata,
    status: row.status,
    runId: row.run_id,
    error: row.error,
    createdAt: row.created_at,
    updatedAt: row.updated_at,
  };
}

// Plain SQL over the shared connection: the table is the gateway's own (migration
// 1764400000000), so it needs no entity in the apps' shared entity list.
@Injectable()
export class TypeOrmAgentThreadsRepository implements AgentThreadsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async create(tenantId: string, threadId: string, metadata: Record<string, unknown>): Promise<{ record: AgentThreadRecord; created: boolean }> {
    assertTenant(tenantId);
    const inserted: AgentThreadRow[] = await this.db.query(
      `INSERT INTO agent_threads (tenant_id, thread_id, metadata) VALUES ($1, $2, $3::jsonb)
       ON CONFLICT (tenant_id, thread_id) DO NOTHING
       RETURNING ${COLUMNS}`,
      [tenantId, threadId, JSON.stringify(metadata)],
    );
    if (inserted[0]) return { record: toRecord(inserted[0]), created: true };
    const existing = await this.find(tenantId, threadId);
    // Deleted between the conflict and the read: insert again.
    if (!existing) return this.create(tenantId, threadId, metadata);
    return { record: existing, created: false };
  }

  async find(tenantId: string, threadId: string): Promise<AgentThreadRecord | null> {
    assertTenant(tenantId);
    const rows: AgentThreadRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM agent_threads WHERE tenant_id = $1 AND thread_id = $2`,
      [tenantId, threadId],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async mergeMetadata(tenantId: string, threadId: string, metadata: Record<string, unknown>) {
    assertTenant(tenantId);
    const [rows]: [AgentThreadRow[], number] = await this.db.query(
      `UPDATE agent_threads SET metadata = metadata || $3::jsonb, updated_at = now()
        WHERE tenant_id = $1 AND thread_id = $2
        RETURNING ${COLUMNS}`,
      [tenantId, threadId, JSON.stringify(metadata)],
    );
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async search(tenantId: string, query: AgentThreadSearch): Promise<AgentThreadRecord[]> {
    assertTenant(tenantId);
    const { where, params } = this.filters(tenantId, query);
    const order = `${SORT_COLUMNS[query.sortBy]} ${query.sortOrder === 'asc' ? 'ASC' : 'DESC'}, thread_id ASC`;
    const rows: AgentThreadRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM agent_threads WHERE ${where} ORDER BY ${order}
        LIMIT $${params.length + 1} OFFSET $${params.length + 2}`,
      [...params, query.limit, query.offset],
    );
    return rows.map(toRecord);
  }

  async count(tenantId: string, query: Pick<AgentThreadSearch, 'status' | 'metadata'>): Promise<number> {
    assertTenant(tenantId);
    const { where, params } = this.filters(tenantId, query);
    const rows: { count: string }[] = await this.db.query(`SELECT count(*) AS count FROM agent_threads WHERE ${where}`, params);
    return Number(rows[0]?.count ?? 0);
  }

  async claim(tenantId: string, threadId: string, runId: string, staleAfterMs: number, checkpointThread?: string) {
    assertTenant(tenantId);
    if (checkpointThread !== undefined) {
      const claimed = await this.claimNotBusy(tenantId, threadId, runId, checkpointThread);
      if (claimed) return claimed;
    }
    // One statement, so two runs racing for the thread cannot both win. Claim and release
    // are on the path of every run: named statements on the pool, planned once per
    // connection, as the executions' hot statements are.
    const { rows } = await pgPoolOf(this.db).query<AgentThreadRow>({
      name: 'agent_threads.claim',
      text: `UPDATE agent_threads
          SET status = 'busy', run_id = $3, run_heartbeat_at = now(), error = NULL, updated_at = now()
        WHERE tenant_id = $1 AND thread_id = $2
          AND (status <> 'busy' OR run_heartbeat_at IS NULL
               OR run_heartbeat_at < now() - make_interval(secs => $4::double precision / 1000))
        RETURNING ${COLUMNS}`,
      values: [tenantId, threadId, runId, staleAfterMs],
    });
    if (rows[0]) return toRecord(rows[0]);
    return (await this.find(tenantId, threadId)) ? ('busy' as const) : ('missing' as const);
  }

  // The claim of a thread that is not busy, with its latest checkpoint read in the same
  // statement (the run's first load then needs no query of its own). The checkpoint read
  // sees the statement's snapshot; the update applies only to the row version that
  // snapshot saw (its xmin), so no claim or release came in between and every earlier
  // run's checkpoint writes, committed before or with its release, are in the snapshot. null
  // when the thread is busy, missing, or its row changed meanwhile: the plain claim
  // decides then.
  private async claimNotBusy(tenantId: string, threadId: string, runId: string, checkpointThread: string): Promise<ClaimedThread | null> {
    const { rows } = await pgPoolOf(this.db).query<AgentThreadRow & { latest_checkpoint_id: string | null; latest_pending: boolean | null }>({
      name: 'agent_threads.claim_with_checkpoint',
      // The claim commits without waiting for its WAL flush: the run's release, which
      // always follows it and waits, flushes it (a claim lost with a crash of PostgreSQL
      // only frees the thread).
      text: `WITH ${commitWithoutFlushCte()}, seen AS (
          SELECT xmin AS version FROM agent_threads, durability
           WHERE tenant_id = $1 AND thread_id = $2 AND status <> 'busy'
        ), claimed AS (
          UPDATE agent_threads t
             SET status = 'busy', run_id = $3, run_heartbeat_at = now(), error = NULL, updated_at = now()
            FROM seen
           WHERE t.tenant_id = $1 AND t.thread_id = $2 AND t.status <> 'busy' AND t.xmin = seen.version
          RETURNING ${QUALIFIED_COLUMNS}
        )
        SELECT claimed.*, latest.checkpoint_id AS latest_checkpoint_id, latest.pending AS latest_pending
          FROM claimed LEFT JOIN LATERAL (${latestCheckpointSql(CHECKPOINT_SCHEMA, '$4')}) latest ON true`,
      values: [tenantId, threadId, runId, checkpointThread],
    });
    const row = rows[0];
    if (!row) return null;
    return {
      ...toRecord(row),
      latestCheckpoint: { threadId: checkpointThread, checkpointId: row.latest_checkpoint_id, pending: row.latest_pending ?? false },
    };
  }

  async heartbeat(tenantId: string, threadId: string, runId: string) {
    assertTenant(tenantId);
    const { rowCount } = await pgPoolOf(this.db).query({
      text: `UPDATE agent_threads SET run_heartbeat_at = now() WHERE tenant_id = $1 AND thread_id = $2 AND run_id = $3`,
      values: [tenantId, threadId, runId],
    });
    return (rowCount ?? 0) > 0;
  }

  async release(tenantId: string, threadId: string, runId: string, error: AgentThreadRecord['error'], carried?: CarriedWrite) {
    assertTenant(tenantId);
    // pg_current_xact_id() gives the statement a transaction id even when no row matches
    // (the thread was deleted or taken over), so its commit always waits for the WAL
    // flush, and with it for the run's earlier writes that did not (the claim, checkpoint
    // writes the carrier did not hold: CheckpointCarrier). The write it holds, the run's
    // last, commits here, and only with the release: a run that lost its thread leaves
    // no state behind. The update locks the row first, so a deletion of the thread waits
    // for this statement, or this one finds no row.
    const values: unknown[] = [tenantId, threadId, runId, error ? 'error' : 'idle', error ? JSON.stringify(error) : null];
    const { rows } = await pgPoolOf(this.db).query<{ released: boolean }>({
      name: carried ? `agent_threads.release+${carried.shape}` : 'agent_threads.release',
      text: `WITH released AS (
          UPDATE agent_threads
             SET status = $4, error = $5::jsonb, run_id = NULL, run_heartbeat_at = NULL, updated_at = now()
           WHERE tenant_id = $1 AND thread_id = $2 AND run_id = $3
          RETURNING 1
        )${carried ? `, ${carried.ctes(values.length + 1, 'EXISTS (SELECT 1 FROM released)')}` : ''}
        SELECT pg_current_xact_id(), EXISTS (SELECT 1 FROM released) AS released`,
      values: carried ? [...values, ...carried.values] : values,
    });
    const released = rows[0]?.released === true;
    if (released) carried?.committed();
    return released;
  }

  // FOR SHARE: the write's statement holds the thread's row until it commits, so a
  // deletion of the thread (and so of its tenant, which deletes checkpoints after its
  // threads) or a takeover waits for it, or it finds the row gone or another run's.
  heldBy(tenantId: string, threadId: string, runId: string): WriteCondition {
    assertTenant(tenantId);
    return {
      sql: (first) =>
        `EXISTS (SELECT 1 FROM agent_threads WHERE tenant_id = $${first} AND thread_id = $${first + 1} AND run_id = $${first + 2} FOR SHARE)`,
      values: [tenantId, threadId, runId],
    };
  }

  async deleteAllOf(tenantId: string): Promise<number> {
    assertTenant(tenantId);
    const [, count] = (await this.db.query(`DELETE FROM agent_threads WHERE tenant_id = $1`, [tenantId])) as [unknown, number];
    return Number(count ?? 0);
  }

  async delete(tenantId: string, threadId: string, runId: string) {
    assertTenant(tenantId);
    await this.db.query(`DELETE FROM agent_threads WHERE tenant_id = $1 AND thread_id = $2 AND run_id = $3`, [
      tenantId,
      threadId,
      runId,
    ]);
  }

  private filters(tenantId: string, query: Pick<AgentThreadSearch, 'ids' | 'status' | 'metadata'>) {
    const clauses = ['tenant_id = $1'];
    const params: unknown[] = [tenantId];
    if (query.ids) {
      params.push(query.ids);
      clauses.push(`thread_id = ANY($${params.length}::text[])`);
    }
    if (query.status) {
      params.push(query.status);
      clauses.push(`status = $${params.length}`);
    }
    if (query.metadata && Object.keys(query.metadata).length > 0) {
      params.push(JSON.stringify(query.metadata));
      clauses.push(`metadata @> $${params.length}::jsonb`);
    }
    return { where: clauses.join(' AND '), params };
  }
}
