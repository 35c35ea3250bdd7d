import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource } from 'typeorm';
import { assertTenant } from '@drydock/core';
import type { CompletedRun, ExecutionRecord, ExecutionsRepository, NewExecution } from './executions.repository.js';

// Every statement here is on the execution hot path, so they are plain SQL with
// RETURNING rather than TypeORM repository calls, which cost several times the CPU
// of the query itself (bench/exec-latency). The stored code is never read back.
const COLUMNS = `id, tenant_id, session_id, thread_id, code_sha256, status, stdout, stderr, truncated,
  result, error, state_lost, files, artifacts, artifacts_skipped, idempotency_key, timeout_ms, duration_ms,
  created_at, started_at, finished_at`;

interface ExecutionRow {
  id: string;
  tenant_id: string;
  session_id: string;
  thread_id: string;
  code_sha256: string;
  status: ExecutionRecord['status'];
  stdout: string;
  stderr: string;
  truncated: boolean;
  result: ExecutionRecord['result'];
  error: ExecutionRecord['error'];
  state_lost: boolean;
  files: ExecutionRecord['files'];
  artifacts: unknown[];
  artifacts_skipped: { path: string; reason: string }[];
  idempotency_key: string | null;
  timeout_ms: number;
  duration_ms: number | null;
  created_at: Date;
  started_at: Date | null;
  finished_at: Date | null;
}

function toRecord(row: ExecutionRow): ExecutionRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    sessionId: row.session_id,
    threadId: row.thread_id,
    codeSha256: row.code_sha256,
    status: row.status,
    stdout: row.stdout,
    stderr: row.stderr,
    truncated: row.truncated,
    result: row.result,
    error: row.error,
    stateLost: row.state_lost,
    files: row.files,
    artifacts: row.artifacts,
    artifactsSkipped: row.artifacts_skipped,
    idempotencyKey: row.idempotency_key,
    timeoutMs: row.timeout_ms,
    durationMs: row.duration_ms,
    createdAt: row.created_at,
    startedAt: row.started_at,
    finishedAt: row.finished_at,
  };
}

// PostgreSQL text cannot hold NUL; output is user-controlled.
const text = (value: string) => value.replaceAll('\u0000', '\uFFFD');

@Injectable()
export class TypeOrmExecutionsRepository implements ExecutionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  async createOrGet(tenantId: string, execution: NewExecution) {
    assertTenant(tenantId);
    // With an idempotency key, the partial unique index settles concurrent requests:
    // the loser inserts nothing and reads the winner's row.
    const rows: ExecutionRow[] = await this.db.query(
      `INSERT INTO executions (id, tenant_id, session_id, thread_id, code, code_sha256, status, timeout_ms, idempotency_key)
       VALUES ($1, $2, $3, $4, $5, $6, 'queued', $7, $8)
       ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
       RETURNING ${COLUMNS}`,
      [
        execution.id,
        tenantId,
        execution.sessionId,
        execution.threadId,
        text(execution.code),
        execution.codeSha256,
        execution.timeoutMs,
        execution.idempotencyKey,
      ],
    );
    if (rows[0]) return { record: toRecord(rows[0]), created: true };
    const existing: ExecutionRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM executions WHERE tenant_id = $1 AND idempotency_key = $2`,
      [tenantId, execution.idempotencyKey],
    );
    return { record: toRecord(existing[0]!), created: false };
  }

  async findById(tenantId: string, executionId: string): Promise<ExecutionRecord | null> {
    assertTenant(tenantId);
    const rows: ExecutionRow[] = await this.db.query(
      `SELECT ${COLUMNS} FROM executions WHERE tenant_id = $1 AND id = $2`,
      [tenantId, executionId],
    );
    return rows[0] ? toRecord(rows[0]) : null;
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

  async complete(tenantId: string, executionId: string, outcome: CompletedRun): Promise<ExecutionRecord> {
    assertTenant(tenantId);
    const [rows]: [ExecutionRow[], number] = await this.db.query(
      `UPDATE executions
          SET status = $3, stdout = $4, stderr = $5, truncated = $6, result = $7, error = $8,
              state_lost = $9, duration_ms = $10, files = $11, artifacts = $12, artifacts_skipped = $13,
              finished_at = now()
        WHERE tenant_id = $1 AND id = $2
        RETURNING ${COLUMNS}`,
      [
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
      ],
    );
    return toRecord(rows[0]!);
  }
}
