import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, Not, QueryFailedError } from 'typeorm';
import { assertTenant } from '@drydock/core';
import { SessionEntity, type SessionStatus } from './session.entity.js';
import type { NewSession, SessionRecord, SessionsRepository } from './sessions.repository.js';

const UNIQUE_VIOLATION = '23505';
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

  findById(tenantId: string, sessionId: string) {
    assertTenant(tenantId);
    return this.repo.findOneBy({ tenantId, id: sessionId });
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

  listAllLive(limit: number): Promise<SessionRecord[]> {
    return this.repo.find({ where: { status: In(LIVE) }, order: { createdAt: 'DESC' }, take: limit });
  }

  findAnyById(sessionId: string) {
    return this.repo.findOneBy({ id: sessionId });
  }

  listLiveOnWorker(workerId: string) {
    return this.repo.findBy({ workerId, status: In(LIVE) });
  }

  async markWorkerSessionsLost(workerId: string) {
    const result = await this.repo.update({ workerId, status: In(['starting', 'ready']) }, { status: 'lost' });
    return result.affected ?? 0;
  }
}
