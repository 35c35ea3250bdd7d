import { Injectable } from '@nestjs/common';
import { InjectRepository } from '@nestjs/typeorm';
import { Not, QueryFailedError, type Repository } from 'typeorm';
import { assertTenant } from '@drydock/core';
import { AgentEntity } from './agent.entity.js';
import { AgentDefinitionError } from './agent-definitions.errors.js';
import type { AgentChanges, AgentRecord, AgentsRepository, NewAgent } from './agents.repository.js';

const UNIQUE_VIOLATION = '23505';

function toRecord(entity: AgentEntity): AgentRecord {
  return {
    id: entity.id,
    tenantId: entity.tenantId,
    name: entity.name,
    instructions: entity.instructions,
    model: entity.model,
    tools: entity.tools,
    backendRoutes: entity.backendRoutes,
    pythonModules: entity.pythonModules as AgentRecord['pythonModules'],
    template: entity.template ?? null,
    network: entity.network ?? null,
    tier: entity.tier ?? null,
    idleAction: entity.idleAction ?? null,
    createdAt: entity.createdAt,
    updatedAt: entity.updatedAt,
  };
}

@Injectable()
export class TypeOrmAgentsRepository implements AgentsRepository {
  constructor(@InjectRepository(AgentEntity) private readonly repo: Repository<AgentEntity>) {}

  async create(tenantId: string, agent: NewAgent): Promise<AgentRecord> {
    assertTenant(tenantId);
    // ON CONFLICT DO NOTHING: a taken name is an answer, not a failed statement.
    const result = await this.repo
      .createQueryBuilder()
      .insert()
      .values({ ...agent, tenantId, updatedAt: new Date() })
      .orIgnore()
      .execute();
    if ((result.raw as unknown[]).length === 0) throw AgentDefinitionError.nameTaken(agent.name);
    return toRecord((await this.repo.findOneBy({ tenantId, id: agent.id }))!);
  }

  async findById(tenantId: string, id: string): Promise<AgentRecord | null> {
    assertTenant(tenantId);
    const entity = await this.repo.findOneBy({ tenantId, id });
    return entity ? toRecord(entity) : null;
  }

  async list(tenantId: string): Promise<AgentRecord[]> {
    assertTenant(tenantId);
    const entities = await this.repo.find({ where: { tenantId }, order: { createdAt: 'ASC', id: 'ASC' } });
    return entities.map(toRecord);
  }

  async update(tenantId: string, id: string, changes: AgentChanges): Promise<AgentRecord | null> {
    assertTenant(tenantId);
    if (changes.name !== undefined && (await this.repo.existsBy({ tenantId, name: changes.name, id: Not(id) }))) {
      throw AgentDefinitionError.nameTaken(changes.name);
    }
    const result = await this.nameChecked(changes.name, () =>
      this.repo.update({ tenantId, id }, { ...changes, updatedAt: new Date() }),
    );
    if (!result.affected) return null;
    return this.findById(tenantId, id);
  }

  async delete(tenantId: string, id: string): Promise<boolean> {
    assertTenant(tenantId);
    const result = await this.repo.delete({ tenantId, id });
    return (result.affected ?? 0) > 0;
  }

  // The unique (tenant_id, name) constraint settles a rename racing another write.
  private async nameChecked<T>(name: string | undefined, write: () => Promise<T>): Promise<T> {
    try {
      return await write();
    } catch (error) {
      if (
        name !== undefined &&
        error instanceof QueryFailedError &&
        (error.driverError as { code?: string; constraint?: string }).code === UNIQUE_VIOLATION
      ) {
        throw AgentDefinitionError.nameTaken(name);
      }
      throw error;
    }
  }
}
