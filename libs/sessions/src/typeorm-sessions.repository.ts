import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, Not, QueryFailedError } from 'typeorm';
import { assertTenant } from '@drydock/core';
import { SessionEntity, type SessionStatus } from './session.entity.js';
import type { NewSession, SessionRecord, SessionsRepository } from './sessions.repository.js';

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
  container_id: string | null;
  created_at: Date;
  last_used_at: Date;
  ended_at: Date | null;
  end_reason: string | null;
}
const LIVE: SessionStatus[] = ['starting', 'ready', 'lost'];

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
      await this.repo.insert({ ...session, tenantId, status: 'starting', lastUsedAt: now, containerId: null });
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

  // On every execution request: plain SQL, mapped by hand (bench/exec-latency).
  async findById(tenantId: string, sessionId: string): Promise<SessionRecord | null> {
    assertTenant(tenantId);
    const rows: SessionRow[] = await this.db.query(
      `SELECT id, tenant_id, thread_id, status, worker_id, limits, storage, datasets, container_id,
              created_at, last_used_at, ended_at, end_reason
         FROM sessions WHERE tenant_id = $1 AND id = $2`,
      [tenantId, sessionId],
    );
    const row = rows[0];
    if (!row) return null;
    return Object.assign(new SessionEntity(), {
      id: row.id,
      tenantId: row.tenant_id,
      threadId: row.thread_id,
      status: row.status,
      workerId: row.worker_id,
      limits: row.limits,
      storage: row.storage,
      datasets: row.datasets,
      containerId: row.container_id,
      createdAt: row.created_at,
      lastUsedAt: row.last_used_at,
      endedAt: row.ended_at,
      endReason: row.end_reason,
    });
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

  async moveToWorker(tenantId: string, sessionId: string, workerId: string) {
    assertTenant(tenantId);
    await this.repo.update({ tenantId, id: sessionId, status: Not('ended') }, { workerId, status: 'ready' });
  }

  async end(tenantId: string, sessionId: string, reason: string) {
    assertTenant(tenantId);
    await this.repo.update(
      { tenantId, id: sessionId, status: Not('ended') },
      { status: 'ended', endedAt: new Date(), endReason: reason },
    );
  }

  async recordContainer(tenantId: string, sessionId: string, containerId: string) {
    assertTenant(tenantId);
    await this.repo.update(
      { tenantId, id: sessionId, status: Not('ended') },
      { containerId, status: 'ready', lastUsedAt: new Date() },
    );
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
        WHERE status <> 'ended' AND NOT (worker_id = ANY($1)) AND last_used_at < $2
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
