import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, type EntityManager, In, Not, QueryFailedError } from 'typeorm';
import { assertTenant, commitWithoutFlushCte } from '@drydock/core';
import {
  EXECUTION_COLUMNS,
  executionFromPrefixedRow,
  executionFromRow,
  pgPoolOf,
  pgText,
  prefixedExecutionColumns,
} from '@drydock/execution';
import { SessionEntity, type SessionStatus } from './session.entity.js';
import type { CheckpointRecord, CheckpointRefusal, NewCheckpoint, NewSession, SessionExecutionDraft, SessionRecord, SessionsRepository } from './sessions.repository.js';

const UNIQUE_VIOLATION = '23505';

interface SessionRow {
  id: string;
  tenant_id: string;
  thread_id: string;
  status: SessionStatus;
  worker_id: string;
  limits: SessionRecord['limits'];
  storage: SessionRecord['storage'];
  datasets: SessionRecord['datasets'];
  template: string | null;
  image: string | null;
  network: SessionRecord['network'];
  container_id: string | null;
  created_at: Date;
  last_used_at: Date;
  ended_at: Date | null;
  end_reason: string | null;
  tier: SessionRecord['tier'];
  hibernation_id: string | null;
  hibernated_at: Date | null;
  idle_action: SessionRecord['idleAction'];
}
// Not ended: a hibernated session is live (its thread's one session), without a container.
const LIVE: SessionStatus[] = ['starting', 'ready', 'lost', 'hibernated'];

const SESSION_COLUMNS = `id, tenant_id, thread_id, status, worker_id, limits, storage, datasets, template, image, network, container_id,
  created_at, last_used_at, ended_at, end_reason, tier, hibernation_id, hibernated_at, idle_action`;

// The session and, if it can take a run, the execution inserted on it: one round trip
// instead of a read and an insert. The insert's ON CONFLICT leaves a repeated
// idempotency key to the partial unique index (the caller then reads the winner).
// Without an idempotency key the insert commits without waiting for its WAL flush
// (synchronous_commit off for this statement's transaction only). Nothing is
// acknowledged on the strength of it: the caller answers once the worker's completing
// UPDATE has committed, which flushes the WAL up to and including this row, and the WAL
// writer flushes it within ~0.6 s anyway, long before a wait times out and names it. A
// PostgreSQL crash in between loses a row no client has seen; a retry is a new
// execution either way. With a key the row must be durable before the code runs, since
// a retry finds the run by it: that insert waits for its flush as usual.
const FIND_WITH_NEW_EXECUTION = `
  WITH ${commitWithoutFlushCte('$8::text IS NULL')}, s AS (
    SELECT ${SESSION_COLUMNS} FROM sessions, durability WHERE tenant_id = $1 AND id = $2
  ), e AS (
    INSERT INTO executions (id, tenant_id, session_id, thread_id, kind, background, code, code_sha256, status, timeout_ms, idempotency_key)
    SELECT $3, s.tenant_id, s.id, s.thread_id, $9, $10, $4, $5, 'queued',
           LEAST(COALESCE($6::integer, (s.limits->>'timeoutMs')::integer), $7::integer), $8
      FROM s WHERE s.status IN ('starting', 'ready', 'hibernated')
    ON CONFLICT (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL DO NOTHING
    RETURNING ${EXECUTION_COLUMNS}
  )
  SELECT s.*, ${prefixedExecutionColumns('e', 'e_')},
         (SELECT r.revision FROM thread_revisions r WHERE r.tenant_id = s.tenant_id AND r.thread_id = s.thread_id) AS thread_revision
    FROM s LEFT JOIN e ON true`;

const CHECKPOINT_COLUMNS = 'id, tenant_id, session_id, kind, sha256, size_bytes, tier, image, created_at, expires_at';

interface CheckpointRow {
  id: string;
  tenant_id: string;
  session_id: string;
  kind: CheckpointRecord['kind'];
  sha256: string;
  size_bytes: string;
  tier: CheckpointRecord['tier'];
  image: string | null;
  created_at: Date;
  expires_at: Date | null;
}

function checkpointFromRow(row: CheckpointRow): CheckpointRecord {
  return {
    id: row.id,
    tenantId: row.tenant_id,
    sessionId: row.session_id,
    kind: row.kind,
    sha256: row.sha256,
    sizeBytes: Number(row.size_bytes),
    tier: row.tier,
    image: row.image,
    createdAt: row.created_at,
    expiresAt: row.expires_at,
  };
}

function sessionFromRow(row: SessionRow): SessionRecord {
  return Object.assign(new SessionEntity(), {
    id: row.id,
    tenantId: row.tenant_id,
    threadId: row.thread_id,
    status: row.status,
    workerId: row.worker_id,
    limits: row.limits,
    storage: row.storage,
    datasets: row.datasets,
    template: row.template,
    image: row.image,
    network: row.network,
    containerId: row.container_id,
    createdAt: row.created_at,
    lastUsedAt: row.last_used_at,
    endedAt: row.ended_at,
    endReason: row.end_reason,
    tier: row.tier,
    hibernationId: row.hibernation_id,
    hibernatedAt: row.hibernated_at,
    idleAction: row.idle_action,
  });
}

@Injectable()
export class TypeOrmSessionsRepository implements SessionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  private get repo() {
    return this.db.getRepository(SessionEntity);
  }

  async createOrGetLive(tenantId: string, session: NewSession) {
    assertTenant(tenantId);
    const findLive = () => this.repo.findOneBy({ tenantId, threadId: session.threadId, status: In(LIVE) });
    const existing = await findLive();
    if (existing) return { record: existing, created: false };
    try {
      const now = new Date();
      const { resumeFrom, ...columns } = session;
      await this.repo.insert({
        ...columns,
        tenantId,
        // A fork starts hibernated on its snapshot: its first job restores it.
        ...(resumeFrom ? { status: 'hibernated' as const, hibernationId: resumeFrom, hibernatedAt: now } : { status: 'starting' as const }),
        lastUsedAt: now,
        containerId: null,
      });
      return { record: (await this.repo.findOneBy({ tenantId, id: session.id }))!, created: true };
    } catch (error) {
      // The partial unique index on live (tenant, thread) settles concurrent creates.
      if (error instanceof QueryFailedError && (error.driverError as { code?: string }).code === UNIQUE_VIOLATION) {
        const winner = await findLive();
        if (winner) return { record: winner, created: false };
      }
      throw error;
    }
  }

  async findWithNewExecution(tenantId: string, sessionId: string, draft: SessionExecutionDraft) {
    assertTenant(tenantId);
    const { rows } = await pgPoolOf(this.db).query<SessionRow & Record<string, unknown>>({
      name: 'sessions.findWithNewExecution',
      text: FIND_WITH_NEW_EXECUTION,
      values: [
        tenantId,
        sessionId,
        draft.id,
        pgText(draft.code),
        draft.codeSha256,
        draft.requestedTimeoutMs,
        draft.maxTimeoutMs,
        draft.idempotencyKey,
        draft.kind,
        draft.background,
      ],
    });
    const row = rows[0];
    if (!row) return { session: null, execution: null };
    const session = sessionFromRow(row);
    const inserted = executionFromPrefixedRow(row, 'e_');
    const threadRevision = row.thread_revision === null ? 0 : Number(row.thread_revision);
    if (inserted) return { session, execution: { record: inserted, created: true }, threadRevision };
    if (!['starting', 'ready'].includes(session.status) || draft.idempotencyKey === null) {
      return { session, execution: null };
    }
    const existing = await pgPoolOf(this.db).query<Record<string, unknown>>({
      text: `SELECT ${EXECUTION_COLUMNS} FROM executions WHERE tenant_id = $1 AND idempotency_key = $2`,
      values: [tenantId, draft.idempotencyKey],
    });
    const record = existing.rows[0];
    return { session, execution: record ? { record: executionFromRow(record), created: false } : null };
  }

  // Plain SQL, mapped by hand: on the path of every request naming a session.
  async findById(tenantId: string, sessionId: string): Promise<SessionRecord | null> {
    assertTenant(tenantId);
    const { rows } = await pgPoolOf(this.db).query<SessionRow>({
      name: 'sessions.findById',
      text: `SELECT ${SESSION_COLUMNS} FROM sessions WHERE tenant_id = $1 AND id = $2`,
      values: [tenantId, sessionId],
    });
    return rows[0] ? sessionFromRow(rows[0]) : null;
  }

  list(tenantId: string, options: { includeEnded: boolean; limit: number }) {
    assertTenant(tenantId);
    return this.repo.find({
      where: options.includeEnded ? { tenantId } : { tenantId, status: In(LIVE) },
      order: { createdAt: 'DESC' },
      take: options.limit,
    });
  }

  countLive(tenantId: string) {
    assertTenant(tenantId);
    return this.repo.countBy({ tenantId, status: In(LIVE) });
  }

  async setStatus(tenantId: string, sessionId: string, status: SessionStatus) {
    assertTenant(tenantId);
    await this.repo.update({ tenantId, id: sessionId, status: Not('ended') }, { status });
  }

  async addDataset(tenantId: string, sessionId: string, dataset: SessionRecord['datasets'][number]): Promise<boolean> {
    assertTenant(tenantId);
    const [, affected]: [unknown, number] = await this.db.query(
      `UPDATE sessions
          SET datasets = CASE WHEN datasets @> jsonb_build_array(jsonb_build_object('name', $3::text))
                              THEN datasets ELSE datasets || jsonb_build_array($4::jsonb) END
        WHERE tenant_id = $1 AND id = $2 AND status <> 'ended'`,
      [tenantId, sessionId, dataset.name, JSON.stringify(dataset)],
    );
    return affected > 0;
  }

  async setNetwork(tenantId: string, sessionId: string, network: NonNullable<SessionRecord['network']>): Promise<boolean> {
    assertTenant(tenantId);
    const [, affected]: [unknown, number] = await this.db.query(
      `UPDATE sessions SET network = $3::jsonb WHERE tenant_id = $1 AND id = $2 AND status <> 'ended'`,
      [tenantId, sessionId, JSON.stringify(network)],
    );
    return affected > 0;
  }

  async moveToWorker(tenantId: string, sessionId: string, workerId: string) {
    assertTenant(tenantId);
    // A hibernated session stays so: its checkpoint is restored on the new worker.
    await this.db.query(
      `UPDATE sessions SET worker_id = $3, status = CASE WHEN status = 'hibernated' THEN 'hibernated' ELSE 'ready' END
        WHERE tenant_id = $1 AND id = $2 AND status <> 'ended'`,
      [tenantId, sessionId, workerId],
    );
  }

  async end(tenantId: string, sessionId: string, reason: string) {
    assertTenant(tenantId);
    await this.db.transaction(async (m) => {
      const [rows]: [{ hibernation_id: string | null }[], number] = await m.query(
        `UPDATE sessions SET status = 'ended', ended_at = now(), end_reason = $3
          WHERE tenant_id = $1 AND id = $2 AND status <> 'ended'
          RETURNING hibernation_id`,
        [tenantId, sessionId, reason],
      );
      const row = rows[0];
      if (row?.hibernation_id) await this.dropHibernations(m, [row.hibernation_id]);
    });
  }

  async recordContainer(tenantId: string, sessionId: string, containerId: string) {
    assertTenant(tenantId);
    await this.db.transaction(async (m) => {
      const [row]: { hibernation_id: string | null }[] = await m.query(
        `SELECT hibernation_id FROM sessions WHERE tenant_id = $1 AND id = $2 AND status <> 'ended' FOR UPDATE`,
        [tenantId, sessionId],
      );
      if (!row) return;
      await m.query(
        `UPDATE sessions SET container_id = $3, status = 'ready', last_used_at = now(), hibernated_at = NULL
          WHERE tenant_id = $1 AND id = $2`,
        [tenantId, sessionId, containerId],
      );
      if (row.hibernation_id) await this.dropHibernations(m, [row.hibernation_id]);
    });
  }

  // The checkpoints' rows (sessions.hibernation_id goes to null with them); their blobs,
  // unreferenced, are the artifact store's collection's.
  private async dropHibernations(m: EntityManager, ids: string[]): Promise<void> {
    await m.query(`DELETE FROM session_checkpoints WHERE id = ANY($1::text[]) AND kind = 'hibernation'`, [ids]);
  }

  async recordCheckpoint(
    tenantId: string,
    checkpoint: NewCheckpoint,
    commitBlob: () => Promise<void>,
    quota?: { maxCount: number; maxBytes: number },
  ): Promise<CheckpointRefusal | null> {
    assertTenant(tenantId);
    return this.db.transaction(async (m) => {
      if (checkpoint.kind === 'snapshot' && quota) {
        // The tenant's row, locked: its snapshots are counted one recording at a time.
        await m.query(`SELECT 1 FROM tenants WHERE id = $1 FOR UPDATE`, [tenantId]);
        const [usage]: { count: string; bytes: string }[] = await m.query(
          `SELECT count(*) AS count, COALESCE(sum(size_bytes), 0) AS bytes FROM session_checkpoints WHERE tenant_id = $1 AND kind = 'snapshot'`,
          [tenantId],
        );
        if (Number(usage!.count) + 1 > quota.maxCount) return 'count';
        if (Number(usage!.bytes) + checkpoint.sizeBytes > quota.maxBytes) return 'bytes';
      }
      // The blob's row, locked (as an artifact's ingest takes it): a collection of the
      // same content waits, or ran first and this commit stores the bytes anew.
      await m.query(
        `INSERT INTO artifact_blobs (sha256, size) VALUES ($1, $2) ON CONFLICT (sha256) DO UPDATE SET size = EXCLUDED.size`,
        [checkpoint.sha256, checkpoint.sizeBytes],
      );
      const [session]: { id: string }[] = await m.query(
        `SELECT id FROM sessions WHERE tenant_id = $1 AND id = $2 AND status <> 'ended' FOR UPDATE`,
        [tenantId, checkpoint.sessionId],
      );
      if (!session) return 'ended';
      await commitBlob();
      await m.query(
        `INSERT INTO session_checkpoints (id, tenant_id, session_id, kind, sha256, size_bytes, tier, image, expires_at)
         VALUES ($1, $2, $3, $4, $5, $6, $7, $8, $9)`,
        [checkpoint.id, tenantId, checkpoint.sessionId, checkpoint.kind, checkpoint.sha256, checkpoint.sizeBytes, checkpoint.tier, checkpoint.image, checkpoint.expiresAt],
      );
      if (checkpoint.kind === 'hibernation') {
        await m.query(
          `UPDATE sessions SET status = 'hibernated', hibernation_id = $3, hibernated_at = now(), container_id = NULL
            WHERE tenant_id = $1 AND id = $2`,
          [tenantId, checkpoint.sessionId, checkpoint.id],
        );
      }
      return null;
    });
  }

  async findCheckpoint(tenantId: string, checkpointId: string): Promise<CheckpointRecord | null> {
    assertTenant(tenantId);
    const rows: CheckpointRow[] = await this.db.query(
      `SELECT ${CHECKPOINT_COLUMNS} FROM session_checkpoints WHERE tenant_id = $1 AND id = $2`,
      [tenantId, checkpointId],
    );
    return rows[0] ? checkpointFromRow(rows[0]) : null;
  }

  async listSnapshots(tenantId: string, now: Date, limit: number): Promise<CheckpointRecord[]> {
    assertTenant(tenantId);
    const rows: CheckpointRow[] = await this.db.query(
      `SELECT ${CHECKPOINT_COLUMNS} FROM session_checkpoints
        WHERE tenant_id = $1 AND kind = 'snapshot' AND (expires_at IS NULL OR expires_at > $2)
        ORDER BY created_at DESC, id DESC LIMIT $3`,
      [tenantId, now, limit],
    );
    return rows.map(checkpointFromRow);
  }

  async snapshotUsage(tenantId: string): Promise<{ count: number; bytes: number }> {
    assertTenant(tenantId);
    const [row]: { count: string; bytes: string }[] = await this.db.query(
      `SELECT count(*) AS count, COALESCE(sum(size_bytes), 0) AS bytes FROM session_checkpoints WHERE tenant_id = $1 AND kind = 'snapshot'`,
      [tenantId],
    );
    return { count: Number(row!.count), bytes: Number(row!.bytes) };
  }

  async deleteSnapshot(tenantId: string, checkpointId: string): Promise<boolean> {
    assertTenant(tenantId);
    const [, affected]: [unknown, number] = await this.db.query(
      `DELETE FROM session_checkpoints WHERE tenant_id = $1 AND id = $2 AND kind = 'snapshot'`,
      [tenantId, checkpointId],
    );
    return affected > 0;
  }

  async deleteExpiredSnapshots(now: Date): Promise<number> {
    const [, affected]: [unknown, number] = await this.db.query(
      `DELETE FROM session_checkpoints WHERE kind = 'snapshot' AND expires_at <= $1`,
      [now],
    );
    return affected;
  }

  async endHibernatedBefore(before: Date): Promise<string[]> {
    return this.db.transaction(async (m) => {
      const [rows]: [{ id: string; hibernation_id: string | null }[]] = await m.query(
        `UPDATE sessions SET status = 'ended', ended_at = now(), end_reason = 'hibernation-expired'
          WHERE id IN (SELECT id FROM sessions WHERE status = 'hibernated' AND last_used_at < $1 FOR UPDATE SKIP LOCKED)
          RETURNING id, hibernation_id`,
        [before],
      );
      const ids = rows.flatMap((r) => (r.hibernation_id ? [r.hibernation_id] : []));
      if (ids.length > 0) await this.dropHibernations(m, ids);
      return rows.map((r) => r.id);
    });
  }


  async touch(tenantId: string, sessionId: string) {
    assertTenant(tenantId);
    await this.repo.update({ tenantId, id: sessionId }, { lastUsedAt: new Date() });
  }

  async touchMany(sessionIds: string[]) {
    if (sessionIds.length === 0) return;
    await this.db.query(`UPDATE sessions SET last_used_at = now() WHERE id = ANY($1) AND status <> 'ended'`, [sessionIds]);
  }

  listAllLive(limit: number): Promise<SessionRecord[]> {
    return this.repo.find({ where: { status: In(LIVE) }, order: { createdAt: 'DESC' }, take: limit });
  }

  findAnyById(sessionId: string) {
    return this.repo.findOneBy({ id: sessionId });
  }

  listLiveOnWorker(workerId: string) {
    return this.repo.findBy({ workerId, status: In(LIVE) });
  }

  async endAbandoned(liveWorkerIds: string[], idleBefore: Date): Promise<string[]> {
    const [rows]: [{ id: string }[], number] = await this.db.query(
      `UPDATE sessions SET status = 'ended', ended_at = now(), end_reason = 'worker-lost'
        WHERE status NOT IN ('ended', 'hibernated') AND NOT (worker_id = ANY($1)) AND last_used_at < $2
        RETURNING id`,
      [liveWorkerIds, idleBefore],
    );
    return rows.map((r) => r.id);
  }

  async markWorkerSessionsLost(workerId: string) {
    const result = await this.repo.update({ workerId, status: In(['starting', 'ready']) }, { status: 'lost' });
    return result.affected ?? 0;
  }
}
