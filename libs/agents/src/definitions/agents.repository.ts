import type { AgentDefinition } from './agent-definition.js';

export type AgentRecord = AgentDefinition;

export type NewAgent = Omit<AgentRecord, 'tenantId' | 'createdAt' | 'updatedAt'>;

export type AgentChanges = Partial<Omit<AgentRecord, 'id' | 'tenantId' | 'createdAt' | 'updatedAt'>>;

// Every method is scoped to one tenant (tenantId first, refused when empty). A name
// already used by the tenant is refused with AGENT_NAME_TAKEN.
export interface AgentsRepository {
  create(tenantId: string, agent: NewAgent): Promise<AgentRecord>;
  findById(tenantId: string, id: string): Promise<AgentRecord | null>;
  // Oldest first.
  list(tenantId: string): Promise<AgentRecord[]>;
  // Null when the tenant has no such agent.
  update(tenantId: string, id: string, changes: AgentChanges): Promise<AgentRecord | null>;
  delete(tenantId: string, id: string): Promise<boolean>;
}

export const AGENTS_REPOSITORY = Symbol('AGENTS_REPOSITORY');
