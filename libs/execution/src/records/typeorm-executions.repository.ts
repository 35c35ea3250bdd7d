import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, QueryFailedError } from 'typeorm';
import type { QueryDeepPartialEntity } from 'typeorm/query-builder/QueryPartialEntity.js';
import { assertTenant } from '@drydock/core';
import type { RunOutcome } from '../runtime/sandbox-runtime.js';
import { ExecutionEntity } from './execution.entity.js';
import type { ExecutionRecord, ExecutionsRepository, NewExecution } from './executions.repository.js';

const UNIQUE_VIOLATION = '23505';

@Injectable()
export class TypeOrmExecutionsRepository implements ExecutionsRepository {
  constructor(@InjectDataSource() private readonly db: DataSource) {}

  private get repo() {
    return this.db.getRepository(ExecutionEntity);
  }

  async createOrGet(tenantId: string, execution: NewExecution) {
    assertTenant(tenantId);
    if (execution.idempotencyKey) {
      const existing = await this.repo.findOneBy({ tenantId, idempotencyKey: execution.idempotencyKey });
      if (existing) return { record: existing, created: false };
    }
    try {
      const record = this.repo.create({ ...execution, tenantId, status: 'queued' });
      await this.repo.insert(record as QueryDeepPartialEntity<ExecutionEntity>);
      return { record: (await this.repo.findOneBy({ tenantId, id: execution.id }))!, created: true };
    } catch (error) {
      // Two concurrent requests with one key: the loser returns the winner's record.
      if (error instanceof QueryFailedError && (error.driverError as { code?: string }).code === UNIQUE_VIOLATION && execution.idempotencyKey) {
        const existing = await this.repo.findOneBy({ tenantId, idempotencyKey: execution.idempotencyKey });
        if (existing) return { record: existing, created: false };
      }
      throw error;
    }
  }

  findById(tenantId: string, executionId: string): Promise<ExecutionRecord | null> {
    assertTenant(tenantId);
    return this.repo.findOneBy({ tenantId, id: executionId });
  }

  async markRunning(tenantId: string, executionId: string): Promise<boolean> {
    assertTenant(tenantId);
    const result = await this.repo.update(
      { tenantId, id: executionId, status: 'queued' },
      { status: 'running', startedAt: new Date() },
    );
    return (result.affected ?? 0) > 0;
  }

  async complete(tenantId: string, executionId: string, outcome: RunOutcome): Promise<ExecutionRecord> {
    assertTenant(tenantId);
    const changes: Partial<ExecutionEntity> = {
        status: outcome.status,
        // PostgreSQL text cannot hold NUL; output is user-controlled.
        stdout: outcome.stdout.replaceAll('\u0000', '\uFFFD'),
        stderr: outcome.stderr.replaceAll('\u0000', '\uFFFD'),
        truncated: outcome.truncated,
        result: outcome.result,
        error: outcome.error,
        stateLost: outcome.stateLost,
        durationMs: Math.round(outcome.durationMs),
        finishedAt: new Date(),
    };
    // jsonb columns hold arbitrary JSON, which TypeORM's deep-partial type cannot express.
    await this.repo.update({ tenantId, id: executionId }, changes as QueryDeepPartialEntity<ExecutionEntity>);
    return (await this.findById(tenantId, executionId))!;
  }
}
