import type { SandboxTier } from '@drydock/core';
import type { SessionNetwork } from '@drydock/execution';
import type { SessionIdleAction } from '@drydock/sessions';
import type { BackendRouteConfig } from '../backends/backend-routes.js';
import type { PortableAgent } from '../python-tools/agent-bundle.js';
import type { PythonToolModule } from '../python-tools/tool-module.js';
import { BUILTIN_TOOL_NAMES, type BuiltinToolName } from '../tools/tools.constants.js';

// An agent definition: what a tenant configures about the agent it talks to (name,
// instructions, model, which built-in tools, where its files live) plus its own Python
// tool modules, stored whole with their SHA-256 and the schemas derived from them.

// The built-in tools a definition may select, in the order the agent offers them.
export const AGENT_BUILTIN_TOOLS = BUILTIN_TOOL_NAMES;

export type AgentBuiltinTool = BuiltinToolName;

// The model "default" is the deployment's configured model (AGENT_MODEL).
export const DEFAULT_AGENT_MODEL = 'default';

// Schema derivation runs in a session of the tenant on this thread. Client thread ids
// start with a letter or digit (THREAD_ID_PATTERN), so no client can name it.
export const AGENT_TOOLS_THREAD_ID = '__agent_tools__';

export const MAX_AGENT_NAME_LENGTH = 200;
export const MAX_AGENT_INSTRUCTIONS_LENGTH = 200_000;
export const MAX_AGENT_MODEL_LENGTH = 200;
export const MAX_AGENT_PYTHON_MODULES = 16;

export interface AgentDefinition {
  id: string;
  tenantId: string;
  name: string;
  instructions: string;
  model: string;
  tools: AgentBuiltinTool[];
  backendRoutes: BackendRouteConfig[];
  pythonModules: PythonToolModule[];
  // The template ("name" or "name:version") the sessions of its threads start from;
  // null: the platform image.
  template: string | null;
  // The hosts the code of its threads' sessions may reach (within the tenant's ceiling,
  // checked when it is set); null: no network.
  network: SessionNetwork | null;
  // The isolation tier of its threads' sessions (one the deployment offers and the
  // tenant allows, checked when it is set); null: the tenant's default tier.
  tier: SandboxTier | null;
  // What its threads' sessions come to when idle (hibernate or end); null: the
  // deployment's SESSION_IDLE_ACTION.
  idleAction: SessionIdleAction | null;
  createdAt: Date;
  updatedAt: Date;
}

// A Python tool module as a client sends it: Drydock derives the rest.
export interface PythonModuleInput {
  name: string;
  source: string;
}

export interface AgentDefinitionInput {
  name: string;
  // Default "".
  instructions?: string;
  // Default "default".
  model?: string;
  // Default: every built-in tool.
  tools?: string[];
  // Default []: every path in the thread's files.
  backendRoutes?: unknown[];
  // Default [].
  pythonModules?: PythonModuleInput[];
  // Default null (the platform image).
  template?: string | null;
  // Default null (no network). Already read as {allow} (the gateway's networkOption);
  // its entries are checked here.
  network?: { allow: readonly unknown[] } | null;
  // Default null (the tenant's default tier).
  tier?: SandboxTier | null;
  // Default null (the deployment's SESSION_IDLE_ACTION).
  idleAction?: SessionIdleAction | null;
}

export type AgentDefinitionPatch = Partial<AgentDefinitionInput>;

// The portable part of a definition, in the bundle's field order.
export function toPortableAgent(definition: AgentDefinition): PortableAgent {
  return {
    name: definition.name,
    instructions: definition.instructions,
    model: definition.model,
    tools: [...definition.tools],
    backendRoutes: definition.backendRoutes.map((route) => ({ ...route })),
    pythonModules: definition.pythonModules.map((module) => ({
      name: module.name,
      source: module.source,
      sha256: module.sha256,
      functions: module.functions,
    })),
  };
}

// What the REST API shows.
export interface AgentView {
  id: string;
  name: string;
  instructions: string;
  model: string;
  tools: AgentBuiltinTool[];
  backendRoutes: BackendRouteConfig[];
  pythonModules: PythonToolModule[];
  template: string | null;
  network: SessionNetwork | null;
  tier: SandboxTier | null;
  idleAction: SessionIdleAction | null;
  createdAt: string;
  updatedAt: string;
}

export function toAgentView(definition: AgentDefinition): AgentView {
  const { tenantId: _tenantId, createdAt, updatedAt, ...rest } = definition;
  return { ...rest, createdAt: new Date(createdAt).toISOString(), updatedAt: new Date(updatedAt).toISOString() };
}
