import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { assertTenant } from '@drydock/core';
import type { CompletedRun, ExecutionFilter, ExecutionRecord, ExecutionsRepository } from './executions.repository.js';

// Every statement here is on the execution hot path, so they are plain SQL with
// RETURNING, sent straight to the pg pool under TypeORM as named (prepared once per
// connection) statements: TypeORM's query runner and repository calls cost several
// times the CPU of the query itself (bench/exec-latency). The stored code is never
// read back.
const COLUMN_NAMES = [
  'id', 'tenant_id', 'session_id', 'thread_id', 'kind', 'code_sha256', 'status', 'stdout', 'stderr', 'truncated', 'exit_code', 'signal', 'background', 'pid',
  'result', 'error', 'state_lost', 'files', 'artifacts', 'artifacts_skipped', 'idempotency_key', 'timeout_ms',
  'duration_ms', 'cpu_ms', 'resumed_ms', 'state_lost_reason', 'created_at', 'started_at', 'finished_at',
] as const;
const COLUMNS = COLUMN_NAMES.join(', ');
export const EXECUTION_COLUMNS = COLUMNS;

// For a statement that returns an execution beside another table's columns: the
// execution columns of `table`, each prefixed (`<prefix>id`, ...), and the record read
// back from such a row (null when the execution columns are null, as after a LEFT JOIN
// that found nothing).
export function prefixedExecutionColumns(table: string, prefix: string): string {
  return COLUMN_NAMES.map((c) => `${table}.${c} AS ${prefix}${c}`).join(', ');
}

export function executionFromPrefixedRow(row: Record<string, unknown>, prefix: string): ExecutionRecord | null {
  if (row[`${prefix}id`] === null || row[`${prefix}id`] === undefined) return null;
  const plain: Record<string, unknown> = {};
  for (const c of COLUMN_NAMES) plain[c] = row[`${prefix}${c}`];
  return toRecord(plain as unknown as ExecutionRow);
}

// The pg pool under a TypeORM data source, for the few hot-path statements that skip
// TypeORM's query runner. Repositories only.
export interface PgPool {
  query<T>(query: { name?: string; text: string; values: unknown[] }): Promise<{ rows: T[]; rowCount: number | null }>;
}

export function pgPoolOf(db: DataSource): PgPool {
  return (db.driver as unknown as { master: PgPool }).master;
}

interface ExecutionRow {
  id: string;
  tenant_id: string;
  session_id: string;
  thread_id: string;
  kind: ExecutionRecord['kind'];
  code_sha256: string;
  status: ExecutionRecord['status'];
  stdout: string;
  stderr: string;
  truncated: boolean;
  exit_code: number | null;
  signal: string | null;
  background: boolean;
  pid: number | null;
  result: ExecutionRecord['result'];
  error: ExecutionRecord['error'];
  state_lost: boolean;
  files: ExecutionRecord['files'];
  artifacts: unknown[];
  artifacts_skipped: { path: string; reason: string }[];
  idempotency_key: string | null;
  timeout_ms: number;
  duration_ms: number | null;
  cpu_ms: number | null;
  resumed_ms: number | null;
  state_lost_reason: string | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

export function executionFromRow(row: Record<string, unknown>): ExecutionRecord {
  return toRecord(row as unknown as ExecutionRow);
}

function toRecord(row: ExecutionRow): ExecutionRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    sessionId: row.session_id,
    threadId: row.thread_id,
    kind: row.kind,
    codeSha256: row.code_sha256,
    status: row.status,
    stdout: row.stdout,
    stderr: row.stderr,
    truncated: row.truncated,
    exitCode: row.exit_code,
    signal: row.signal,
    background: row.background,
    pid: row.pid,
    result: row.result,
    error: row.error,
    stateLost: row.state_lost,
    files: row.files,
    artifacts: row.artifacts,
    artifactsSkipped: row.artifacts_skipped,
    idempotencyKey: row.idempotency_key,
    timeoutMs: row.timeout_ms,
    durationMs: row.duration_ms,
    cpuMs: row.cpu_ms,
    resumedMs: row.resumed_ms,
    stateLostReason: row.state_lost_reason,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

// PostgreSQL text cannot hold NUL; output and code are user-controlled.
export const pgText = (value: string) => value.replaceAll('\u0000', '\uFFFD');
const text = pgText;

@Injectable()
export class TypeOrmExecutionsRepository implements ExecutionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  private get pool(): PgPool {
    return pgPoolOf(this.db);
  }

  // Unnamed on purpose: planned with the actual values, so absent filters drop out and
  // the (tenant_id, created_at, id) or (created_at, id) index serves the keyset.
  async list(filter: ExecutionFilter): Promise<ExecutionRecord[]> {
    if (filter.tenantId !== undefined) assertTenant(filter.tenantId);
    const { rows } = await this.pool.query<ExecutionRow>({
      text: `SELECT ${COLUMNS} FROM executions
        WHERE ($1::text IS NULL OR tenant_id = $1)
          AND ($2::text IS NULL OR status = $2)
          AND ($3::timestamptz IS NULL OR created_at >= $3)
          AND ($4::timestamptz IS NULL OR created_at < $4)
          AND ($5::timestamptz IS NULL OR (created_at, id) < ($5, $6::text))
        ORDER BY created_at DESC, id DESC
        LIMIT $7`,
      values: [
        filter.tenantId ?? null,
        filter.status ?? null,
        filter.from ?? null,
        filter.to ?? null,
        filter.before?.createdAt ?? null,
        filter.before?.id ?? null,
        filter.limit,
      ],
    });
    return rows.map(toRecord);
  }

  async listUnfinished(tenantId: string, sessionId: string): Promise<string[]> {
    assertTenant(tenantId);
    const { rows } = await this.pool.query<{ id: string }>({
      name: 'executions.listUnfinished',
      text: `SELECT id FROM executions
        WHERE tenant_id = $1 AND session_id = $2 AND status IN ('queued', 'running')
        ORDER BY created_at, id`,
      values: [tenantId, sessionId],
    });
    return rows.map((r) => r.id);
  }

  async findById(tenantId: string, executionId: string): Promise<ExecutionRecord | null> {
    assertTenant(tenantId);
    const { rows } = await this.pool.query<ExecutionRow>({
      name: 'executions.findById',
      text: `SELECT ${COLUMNS} FROM executions WHERE tenant_id = $1 AND id = $2`,
      values: [tenantId, executionId],
    });
    return rows[0] ? toRecord(rows[0]) : null;
  }

  // Undoes the insert of an execution that was never dispatched (its session could not
  // be placed on a worker), so a retry with the same idempotency key starts afresh.
  async discardQueued(tenantId: string, executionId: string): Promise<void> {
    assertTenant(tenantId);
    await this.db.query(`DELETE FROM executions WHERE tenant_id = $1 AND id = $2 AND status = 'queued'`, [
      tenantId,
      executionId,
    ]);
  }

  async markRunning(tenantId: string, executionId: string): Promise<boolean> {
    assertTenant(tenantId);
    // TypeORM answers an UPDATE with [rows, rowCount].
    const [rows]: [unknown[], number] = await this.db.query(
      `UPDATE executions SET status = 'running', started_at = now()
        WHERE tenant_id = $1 AND id = $2 AND status = 'queued' RETURNING id`,
      [tenantId, executionId],
    );
    return rows.length > 0;
  }

  async markStarted(tenantId: string, executionId: string, pid: number): Promise<ExecutionRecord | null> {
    assertTenant(tenantId);
    const { rows } = await this.pool.query<ExecutionRow>({
      name: 'executions.mark-started',
      text: `UPDATE executions SET status = 'running', started_at = COALESCE(started_at, now()), pid = $3
        WHERE tenant_id = $1 AND id = $2 AND status IN ('queued', 'running') RETURNING ${COLUMNS}`,
      values: [tenantId, executionId, pid],
    });
    return rows[0] ? toRecord(rows[0]) : null;
  }

  async listBackground(tenantId: string, sessionId: string, limit: number): Promise<(ExecutionRecord & { code: string })[]> {
    assertTenant(tenantId);
    const { rows } = await this.pool.query<ExecutionRow & { code: string }>({
      name: 'executions.list-background',
      text: `SELECT ${COLUMNS}, code FROM executions
        WHERE tenant_id = $1 AND session_id = $2 AND background AND status <> 'queued'
        ORDER BY created_at DESC, id DESC LIMIT $3`,
      values: [tenantId, sessionId, limit],
    });
    return rows.map((row) => ({ ...toRecord(row), code: row.code }));
  }

  async listRunningBackground(tenantId: string, sessionId: string): Promise<string[]> {
    assertTenant(tenantId);
    const { rows } = await this.pool.query<{ id: string }>({
      name: 'executions.list-running-background',
      text: `SELECT id FROM executions WHERE tenant_id = $1 AND session_id = $2 AND background AND status = 'running'`,
      values: [tenantId, sessionId],
    });
    return rows.map((r) => r.id);
  }

  async complete(tenantId: string, executionId: string, outcome: CompletedRun): Promise<ExecutionRecord> {
    return toRecord((await this.update(tenantId, executionId, outcome, false))!);
  }

  async completeUnfinished(tenantId: string, executionId: string, outcome: CompletedRun): Promise<ExecutionRecord | null> {
    const row = await this.update(tenantId, executionId, outcome, true);
    return row ? toRecord(row) : null;
  }

  private async update(tenantId: string, executionId: string, outcome: CompletedRun, unfinishedOnly: boolean): Promise<ExecutionRow | undefined> {
    assertTenant(tenantId);
    const { rows } = await this.pool.query<ExecutionRow>({
      name: unfinishedOnly ? 'executions.complete-unfinished' : 'executions.complete',
      text: `UPDATE executions
          SET status = $3, stdout = $4, stderr = $5, truncated = $6, result = $7, error = $8,
              state_lost = $9, duration_ms = $10, files = $11, artifacts = $12, artifacts_skipped = $13,
              cpu_ms = $14, exit_code = $15, signal = $16, resumed_ms = $17, state_lost_reason = $18, finished_at = now()
        WHERE tenant_id = $1 AND id = $2${unfinishedOnly ? ` AND status IN ('queued', 'running')` : ''}
        RETURNING ${COLUMNS}`,
      values: [
        tenantId,
        executionId,
        outcome.status,
        text(outcome.stdout),
        text(outcome.stderr),
        outcome.truncated,
        outcome.result === null ? null : JSON.stringify(outcome.result),
        outcome.error === null ? null : JSON.stringify(outcome.error),
        outcome.stateLost,
        Math.round(outcome.durationMs),
        JSON.stringify(outcome.files),
        JSON.stringify(outcome.artifacts),
        JSON.stringify(outcome.artifactsSkipped),
        outcome.cpuMs ?? null,
        outcome.exitCode ?? null,
        outcome.signal ?? null,
        outcome.resumedMs ?? null,
        outcome.stateLostReason ?? null,
      ],
    });
    return rows[0];
  }
}
