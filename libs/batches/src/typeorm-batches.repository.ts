import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type QueryRunner } from 'typeorm';
import { assertTenant } from '@drydock/core';
import { pgPoolOf, type PgPool } from '@drydock/execution';
import type {
  BatchCounts,
  BatchItemInput,
  BatchItemRecord,
  BatchItemRef,
  BatchRecord,
  FinishedItemStatus,
  ItemOutcome,
  NewBatch,
  StartedItem,
} from './batch.types.js';
import { FINISHED_ITEM_STATUSES } from './batch.types.js';
import type { BatchesRepository, ItemStatusFilter } from './batches.repository.js';

const UNIQUE_VIOLATION = '23505';
const BATCH_COLUMNS = `id, tenant_id, status, total, n_queued, n_running, n_ok, n_error, n_timeout, n_memory, n_killed,
  n_cancelled, limits, timeout_ms, concurrency, idempotency_key, metadata, template, image, network, created_at, started_at, finished_at`;
const ITEM_COLUMNS = `batch_id, item_index, client_id, status, attempts, stdout, stderr, truncated, result, error,
  files_report, artifacts, duration_ms, started_at, finished_at`;
const FINISHED_SQL = FINISHED_ITEM_STATUSES.map((s) => `'${s}'`).join(', ');

// When a batch with no item queued or running has its finish time and expiry set.
const FINISHED_WHEN = (queued: string, running: string) => `(${queued}) = 0 AND (${running}) = 0`;

// The statement recording an item's end, for each status (its counter is a column):
// the item changes only while it is running, and the batch's counts move in the same
// statement, so a redelivered outcome finds nothing to change.
function finishStatement(status: Exclude<FinishedItemStatus, 'cancelled'>) {
  return {
    name: `batch-item-finish-${status}`,
    text: `
      WITH item AS (
        UPDATE batch_items SET status = '${status}', stdout = $4, stderr = $5, truncated = $6, result = $7, error = $8,
               files_report = $9, artifacts = $10, duration_ms = $11, cpu_ms = $13, finished_at = now()
         WHERE batch_id = $1 AND tenant_id = $2 AND item_index = $3 AND status = 'running'
        RETURNING 1
      )
      UPDATE batches SET
        n_running = n_running - 1,
        n_${status} = n_${status} + 1,
        status = CASE WHEN NOT (${FINISHED_WHEN('n_queued', 'n_running - 1')}) THEN status
                      WHEN status IN ('queued', 'running') THEN 'completed'
                      WHEN status = 'cancelling' THEN 'cancelled' ELSE status END,
        finished_at = CASE WHEN ${FINISHED_WHEN('n_queued', 'n_running - 1')} THEN now() ELSE finished_at END,
        expires_at = CASE WHEN ${FINISHED_WHEN('n_queued', 'n_running - 1')} AND $12::integer > 0
                          THEN now() + make_interval(secs => $12::integer) ELSE expires_at END
       WHERE id = $1 AND EXISTS (SELECT 1 FROM item)
      RETURNING id`,
  };
}

// An admitted item (or a running one whose worker was lost) starts on this worker; the
// batch's counts move from queued to running only for a first start.
const START = {
  name: 'batch-item-start',
  text: `
    WITH old AS (
      SELECT i.status, i.attempts FROM batch_items i JOIN batches b ON b.id = i.batch_id
       WHERE i.batch_id = $1 AND i.tenant_id = $2 AND i.item_index = $3
         AND i.status IN ('admitted', 'running') AND i.attempts < $5 AND b.status NOT IN ('cancelling', 'cancelled')
       FOR UPDATE OF i
    ), item AS (
      UPDATE batch_items i SET status = 'running', attempts = i.attempts + 1, worker_id = $4, started_at = now()
        FROM old WHERE i.batch_id = $1 AND i.item_index = $3
      RETURNING i.client_id, i.code, i.files, i.attempts, old.status AS old_status
    ), b AS (
      UPDATE batches SET
        n_queued = n_queued - (SELECT count(*) FROM item WHERE old_status = 'admitted'),
        n_running = n_running + (SELECT count(*) FROM item WHERE old_status = 'admitted'),
        status = CASE WHEN status = 'queued' THEN 'running' ELSE status END,
        started_at = COALESCE(started_at, now())
       WHERE id = $1 AND EXISTS (SELECT 1 FROM item)
      RETURNING limits, timeout_ms, image, network
    )
    SELECT item.client_id, item.code, item.files, item.attempts, b.limits, b.timeout_ms, b.image, b.network FROM item, b`,
};

interface BatchRow {
  id: string;
  tenant_id: string;
  status: BatchRecord['status'];
  total: number;
  n_queued: number;
  n_running: number;
  n_ok: number;
  n_error: number;
  n_timeout: number;
  n_memory: number;
  n_killed: number;
  n_cancelled: number;
  limits: BatchRecord['limits'];
  timeout_ms: number;
  concurrency: number;
  idempotency_key: string | null;
  metadata: BatchRecord['metadata'];
  template: string | null;
  image: string | null;
  network: BatchRecord['network'];
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

interface ItemRow {
  batch_id: string;
  item_index: number;
  client_id: string | null;
  status: BatchItemRecord['status'];
  attempts: number;
  stdout: string | null;
  stderr: string | null;
  truncated: boolean | null;
  result: BatchItemRecord['result'];
  error: BatchItemRecord['error'];
  files_report: BatchItemRecord['files'];
  artifacts: unknown[] | null;
  duration_ms: number | null;
  started_at: Date | null;
  finished_at: Date | null;
}

function batchFromRow(row: BatchRow): BatchRecord {
  const counts: BatchCounts = {
    queued: row.n_queued,
    running: row.n_running,
    ok: row.n_ok,
    error: row.n_error,
    timeout: row.n_timeout,
    memory: row.n_memory,
    killed: row.n_killed,
    cancelled: row.n_cancelled,
  };
  return {
    id: row.id,
    tenantId: row.tenant_id,
    status: row.status,
    total: row.total,
    counts,
    limits: row.limits,
    timeoutMs: row.timeout_ms,
    concurrency: row.concurrency,
    idempotencyKey: row.idempotency_key,
    metadata: row.metadata,
    template: row.template,
    image: row.image,
    network: row.network ?? null,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

function itemFromRow(row: ItemRow): BatchItemRecord {
  return {
    batchId: row.batch_id,
    index: row.item_index,
    clientId: row.client_id,
    status: row.status,
    attempts: row.attempts,
    stdout: row.stdout,
    stderr: row.stderr,
    truncated: row.truncated,
    result: row.result,
    error: row.error,
    files: row.files_report,
    artifacts: row.artifacts,
    durationMs: row.duration_ms,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

// TypeORM's query runner answers an UPDATE ... RETURNING with [rows, rowCount].
function returned<T>(result: unknown): T[] {
  return Array.isArray(result) && Array.isArray(result[0]) ? (result[0] as T[]) : (result as T[]);
}

// Plain SQL on the pg pool under TypeORM, as the other hot repositories: the item
// transitions run once per item on the workers.
@Injectable()
export class TypeOrmBatchesRepository implements BatchesRepository {
  private readonly pool: PgPool;

  constructor(@InjectDataSource() private readonly db: DataSource) {
    this.pool = pgPoolOf(db);
  }

  async create(
    tenantId: string,
    batch: NewBatch,
    items: AsyncIterable<BatchItemInput[]>,
  ): Promise<{ record: BatchRecord; created: boolean }> {
    assertTenant(tenantId);
    // Null when the idempotency key is taken: the batch row's savepoint was rolled back,
    // so the transaction commits nothing, and the batch that holds the key is read after.
    const record = await this.db.transaction(async (manager) => {
      const runner = manager.queryRunner!;
      if (!(await this.insertBatch(runner, tenantId, batch))) return null;
      let total = 0;
      for await (const chunk of items) {
        if (chunk.length === 0) continue;
        await runner.query(
          `INSERT INTO batch_items (batch_id, item_index, tenant_id, client_id, code, files)
           SELECT $1, t.idx, $2, t.client_id, t.code, t.files
             FROM unnest($3::integer[], $4::text[], $5::text[], $6::jsonb[]) AS t(idx, client_id, code, files)`,
          [
            batch.id,
            tenantId,
            chunk.map((_, i) => total + i),
            chunk.map((item) => item.id ?? null),
            chunk.map((item) => item.code),
            chunk.map((item) => (item.files ? JSON.stringify(item.files) : null)),
          ],
        );
        total += chunk.length;
      }
      if (total === 0) throw new Error('a batch without items reached the repository');
      const rows = returned<BatchRow>(
        await runner.query(`UPDATE batches SET total = $2, n_queued = $2 WHERE id = $1 RETURNING ${BATCH_COLUMNS}`, [batch.id, total]),
      );
      return batchFromRow(rows[0]!);
    });
    if (record) return { record, created: true };
    const existing = await this.findByIdempotencyKey(tenantId, batch.idempotencyKey!);
    if (!existing) throw new Error('idempotent batch vanished');
    return { record: existing, created: false };
  }

  // The batch row (with a placeholder total until its items are in), or false when the
  // idempotency key is taken.
  private async insertBatch(runner: QueryRunner, tenantId: string, batch: NewBatch): Promise<boolean> {
    try {
      await runner.query('SAVEPOINT batch_insert');
      await runner.query(
        `INSERT INTO batches (id, tenant_id, status, total, n_queued, limits, timeout_ms, concurrency, idempotency_key, metadata, template, image, network)
         VALUES ($1, $2, 'queued', 1, 0, $3, $4, $5, $6, $7, $8, $9, $10::jsonb)`,
        [
          batch.id,
          tenantId,
          batch.limits,
          batch.timeoutMs,
          batch.concurrency,
          batch.idempotencyKey,
          batch.metadata,
          batch.template,
          batch.image,
          batch.network ? JSON.stringify(batch.network) : null,
        ],
      );
      await runner.query('RELEASE SAVEPOINT batch_insert');
      return true;
    } catch (error) {
      if ((error as { driverError?: { code?: string } }).driverError?.code === UNIQUE_VIOLATION && batch.idempotencyKey) {
        await runner.query('ROLLBACK TO SAVEPOINT batch_insert');
        return false;
      }
      throw error;
    }
  }

  async findById(tenantId: string, batchId: string): Promise<BatchRecord | null> {
    assertTenant(tenantId);
    const { rows } = await this.pool.query<BatchRow>({
      name: 'batch-find',
      text: `SELECT ${BATCH_COLUMNS} FROM batches WHERE tenant_id = $1 AND id = $2`,
      values: [tenantId, batchId],
    });
    return rows[0] ? batchFromRow(rows[0]) : null;
  }

  async findByIdempotencyKey(tenantId: string, key: string): Promise<BatchRecord | null> {
    assertTenant(tenantId);
    const { rows } = await this.pool.query<BatchRow>({
      text: `SELECT ${BATCH_COLUMNS} FROM batches WHERE tenant_id = $1 AND idempotency_key = $2`,
      values: [tenantId, key],
    });
    return rows[0] ? batchFromRow(rows[0]) : null;
  }

  async list(tenantId: string, page: { limit: number; before?: string }): Promise<BatchRecord[]> {
    assertTenant(tenantId);
    const { rows } = await this.pool.query<BatchRow>({
      text: `SELECT ${BATCH_COLUMNS} FROM batches
              WHERE tenant_id = $1
                AND ($2::text IS NULL OR (created_at, id) < (SELECT created_at, id FROM batches WHERE tenant_id = $1 AND id = $2))
              ORDER BY created_at DESC, id DESC LIMIT $3`,
      values: [tenantId, page.before ?? null, page.limit],
    });
    return rows.map(batchFromRow);
  }

  async listItems(
    tenantId: string,
    batchId: string,
    filter: { status?: ItemStatusFilter; offset: number; limit: number },
  ): Promise<BatchItemRecord[]> {
    assertTenant(tenantId);
    // Admitted items are queued to the client.
    const statuses = filter.status === undefined ? null : filter.status === 'queued' ? ['queued', 'admitted'] : [filter.status];
    const { rows } = await this.pool.query<ItemRow>({
      text: `SELECT ${ITEM_COLUMNS} FROM batch_items
              WHERE batch_id = $1 AND tenant_id = $2 AND ($3::text[] IS NULL OR status = ANY($3::text[]))
              ORDER BY item_index OFFSET $4 LIMIT $5`,
      values: [batchId, tenantId, statuses, filter.offset, filter.limit],
    });
    return rows.map(itemFromRow);
  }

  async finishedItemsAfter(tenantId: string, batchId: string, afterIndex: number, limit: number): Promise<BatchItemRecord[]> {
    assertTenant(tenantId);
    const { rows } = await this.pool.query<ItemRow>({
      name: 'batch-items-finished-after',
      text: `SELECT ${ITEM_COLUMNS} FROM batch_items
              WHERE batch_id = $1 AND tenant_id = $2 AND item_index > $3 AND status IN (${FINISHED_SQL})
              ORDER BY item_index LIMIT $4`,
      values: [batchId, tenantId, afterIndex, limit],
    });
    return rows.map(itemFromRow);
  }

  async admit(tenantId: string, tenantLimit: number): Promise<BatchItemRef[]> {
    assertTenant(tenantId);
    return this.db.transaction(async (manager) => {
      const runner = manager.queryRunner!;
      const admitted: BatchItemRef[] = [];
      // One admission at a time per tenant, on any gateway or worker: the in-flight
      // count it reads stays true until it commits.
      await runner.query(`SELECT pg_advisory_xact_lock(hashtext('drydock:batch-admission:' || $1))`, [tenantId]);
      const batches: { id: string; concurrency: number; waiting: number; inflight: number }[] = await runner.query(
        `SELECT b.id, b.concurrency, b.n_queued - coalesce(f.admitted, 0) AS waiting, coalesce(f.inflight, 0) AS inflight
           FROM batches b
           LEFT JOIN (
             SELECT batch_id, count(*)::int AS inflight, count(*) FILTER (WHERE status = 'admitted')::int AS admitted
               FROM batch_items WHERE tenant_id = $1 AND status IN ('admitted', 'running') GROUP BY batch_id
           ) f ON f.batch_id = b.id
          WHERE b.tenant_id = $1 AND b.status IN ('queued', 'running')
            -- A suspended tenant's items wait until it is resumed.
            AND NOT EXISTS (SELECT 1 FROM tenants t WHERE t.id = $1 AND t.suspended_at IS NOT NULL)
          ORDER BY b.created_at, b.id`,
        [tenantId],
      );
      let room = tenantLimit - batches.reduce((sum, b) => sum + b.inflight, 0);
      for (const batch of batches) {
        if (room <= 0) break;
        const take = Math.min(room, batch.concurrency - batch.inflight, batch.waiting);
        if (take <= 0) continue;
        const rows = returned<{ item_index: number }>(
          await runner.query(
            // The pick is materialised: as an IN (subquery) it may be evaluated more
            // than once, each time locking (and admitting) other rows.
            `WITH picked AS MATERIALIZED (
               SELECT item_index FROM batch_items WHERE batch_id = $1 AND status = 'queued'
                ORDER BY item_index LIMIT $2 FOR UPDATE SKIP LOCKED
             )
             UPDATE batch_items i SET status = 'admitted', admitted_at = now()
               FROM picked WHERE i.batch_id = $1 AND i.item_index = picked.item_index
             RETURNING i.item_index`,
            [batch.id, take],
          ),
        );
        for (const row of rows) admitted.push({ batchId: batch.id, tenantId, index: row.item_index });
        room -= rows.length;
      }
      return admitted.sort((a, b) => (a.batchId === b.batchId ? a.index - b.index : 0));
    });
  }

  async start(ref: BatchItemRef, workerId: string, maxAttempts: number): Promise<StartedItem | null> {
    assertTenant(ref.tenantId);
    const { rows } = await this.pool.query<{
      client_id: string | null;
      code: string;
      files: Record<string, string> | null;
      attempts: number;
      limits: StartedItem['limits'];
      timeout_ms: number;
      image: string | null;
      network: StartedItem['network'];
    }>({ ...START, values: [ref.batchId, ref.tenantId, ref.index, workerId, maxAttempts] });
    const row = rows[0];
    if (!row) return null;
    return {
      ref,
      clientId: row.client_id,
      code: row.code,
      files: row.files,
      attempt: row.attempts,
      limits: row.limits,
      timeoutMs: row.timeout_ms,
      image: row.image,
      network: row.network ?? null,
    };
  }

  async finish(ref: BatchItemRef, outcome: ItemOutcome, retentionSeconds: number): Promise<boolean> {
    assertTenant(ref.tenantId);
    const { rowCount } = await this.pool.query({
      ...finishStatement(outcome.status),
      values: [
        ref.batchId,
        ref.tenantId,
        ref.index,
        outcome.stdout,
        outcome.stderr,
        outcome.truncated,
        outcome.result === null ? null : JSON.stringify(outcome.result),
        outcome.error === null ? null : JSON.stringify(outcome.error),
        JSON.stringify(outcome.files),
        JSON.stringify(outcome.artifacts),
        Math.round(outcome.durationMs),
        retentionSeconds,
        outcome.cpuMs ?? null,
      ],
    });
    return (rowCount ?? 0) > 0;
  }

  async cancel(tenantId: string, batchId: string, retentionSeconds: number): Promise<BatchRecord | null> {
    assertTenant(tenantId);
    const { rows } = await this.pool.query<BatchRow>({
      text: `
        WITH c AS (
          UPDATE batch_items SET status = 'cancelled', finished_at = now()
           WHERE batch_id = $2 AND tenant_id = $1 AND status IN ('queued', 'admitted')
          RETURNING 1
        ), n AS (SELECT count(*)::int AS n FROM c)
        UPDATE batches SET
          -- Items still running keep the batch from its final status until they end.
          status = CASE WHEN status NOT IN ('queued', 'running') THEN status
                        WHEN n_running > 0 THEN 'cancelling' ELSE 'cancelled' END,
          n_queued = n_queued - n.n,
          n_cancelled = n_cancelled + n.n,
          finished_at = CASE WHEN finished_at IS NULL AND n_running = 0 THEN now() ELSE finished_at END,
          expires_at = CASE WHEN finished_at IS NULL AND n_running = 0 AND $3::integer > 0
                            THEN now() + make_interval(secs => $3::integer) ELSE expires_at END
          FROM n
         WHERE id = $2 AND tenant_id = $1
        RETURNING ${BATCH_COLUMNS.split(',').map((c) => `batches.${c.trim()}`).join(', ')}`,
      values: [tenantId, batchId, retentionSeconds],
    });
    return rows[0] ? batchFromRow(rows[0]) : null;
  }

  async runState(ref: BatchItemRef): Promise<{ status: string; attempts: number; batchStatus: string } | null> {
    assertTenant(ref.tenantId);
    const { rows } = await this.pool.query<{ status: string; attempts: number; batch_status: string }>({
      text: `SELECT i.status, i.attempts, b.status AS batch_status FROM batch_items i JOIN batches b ON b.id = i.batch_id
              WHERE i.batch_id = $1 AND i.tenant_id = $2 AND i.item_index = $3`,
      values: [ref.batchId, ref.tenantId, ref.index],
    });
    const row = rows[0];
    return row ? { status: row.status, attempts: row.attempts, batchStatus: row.batch_status } : null;
  }

  async runningItems(tenantId: string, batchId: string): Promise<{ index: number; workerId: string | null }[]> {
    assertTenant(tenantId);
    const { rows } = await this.pool.query<{ item_index: number; worker_id: string | null }>({
      text: `SELECT item_index, worker_id FROM batch_items WHERE batch_id = $1 AND tenant_id = $2 AND status = 'running'`,
      values: [batchId, tenantId],
    });
    return rows.map((r) => ({ index: r.item_index, workerId: r.worker_id }));
  }

  async strandedAdmitted(before: Date, limit: number): Promise<BatchItemRef[]> {
    const { rows } = await this.pool.query<{ batch_id: string; tenant_id: string; item_index: number }>({
      text: `SELECT batch_id, tenant_id, item_index FROM batch_items
              WHERE status = 'admitted' AND admitted_at < $1 ORDER BY admitted_at LIMIT $2`,
      values: [before, limit],
    });
    return rows.map((r) => ({ batchId: r.batch_id, tenantId: r.tenant_id, index: r.item_index }));
  }

  async strandedRunning(startedBefore: Date, limit: number): Promise<(BatchItemRef & { attempts: number })[]> {
    const { rows } = await this.pool.query<{ batch_id: string; tenant_id: string; item_index: number; attempts: number }>({
      text: `SELECT batch_id, tenant_id, item_index, attempts FROM batch_items
              WHERE status = 'running' AND started_at < $1 ORDER BY started_at LIMIT $2`,
      values: [startedBefore, limit],
    });
    return rows.map((r) => ({ batchId: r.batch_id, tenantId: r.tenant_id, index: r.item_index, attempts: r.attempts }));
  }

  async tenantsWaiting(limit: number): Promise<string[]> {
    const { rows } = await this.pool.query<{ tenant_id: string }>({
      text: `SELECT DISTINCT tenant_id FROM batches WHERE status IN ('queued', 'running') AND n_queued > 0 LIMIT $1`,
      values: [limit],
    });
    return rows.map((r) => r.tenant_id);
  }

  async deleteExpired(now: Date, limit: number): Promise<number> {
    const { rowCount } = await this.pool.query({
      text: `WITH picked AS MATERIALIZED (
               SELECT id FROM batches WHERE expires_at <= $1 ORDER BY expires_at LIMIT $2 FOR UPDATE SKIP LOCKED
             )
             DELETE FROM batches b USING picked WHERE b.id = picked.id`,
      values: [now, limit],
    });
    return rowCount ?? 0;
  }
}
