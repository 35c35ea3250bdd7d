import { Column, CreateDateColumn, Entity, PrimaryColumn, Unique } from 'typeorm';
import type { SandboxTier } from '@drydock/core';
import type { SessionNetwork } from '@drydock/execution';
import type { SessionIdleAction } from '@drydock/sessions';
import type { BackendRouteConfig } from '../backends/backend-routes.js';
import type { PythonToolModule } from '../python-tools/tool-module.js';
import type { AgentBuiltinTool } from './agent-definition.js';

export type StoredPythonModule = Omit<PythonToolModule, 'functions'> & { functions: object[] };

@Entity({ name: 'agents' })
@Unique('agents_tenant_name_uq', ['tenantId', 'name'])
export class AgentEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'tenant_id', type: 'text' })
  tenantId: string;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', default: '' })
  instructions: string;

  @Column({ type: 'text' })
  model: string;

  @Column({ type: 'jsonb', default: () => "'[]'" })
  tools: AgentBuiltinTool[];

  @Column({ name: 'backend_routes', type: 'jsonb', default: () => "'[]'" })
  backendRoutes: BackendRouteConfig[];

  // json, not jsonb: jsonb reorders object keys, and a function's `properties` are in
  // signature order (the order the model reads them; exports stay byte-identical).
  // Typed as plain objects: the JSON Schema type inside PythonToolModule is recursive,
  // too deep for TypeORM's partial-entity types; the repository maps it back.
  @Column({ name: 'python_modules', type: 'json', default: () => "'[]'" })
  pythonModules: StoredPythonModule[];

  @Column({ type: 'text', nullable: true })
  template: string | null;

  @Column({ type: 'jsonb', nullable: true })
  network: SessionNetwork | null;

  @Column({ type: 'text', nullable: true })
  tier: SandboxTier | null;

  @Column({ name: 'idle_action', type: 'text', nullable: true })
  idleAction: SessionIdleAction | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'updated_at', type: 'timestamptz' })
  updatedAt: Date;
}

export const AGENT_DEFINITION_ENTITIES = [AgentEntity];
