import type { StructuredToolInterface } from '@langchain/core/tools';
import type { AppConfig } from '@drydock/core';
import type { Backend, SandboxBackend } from '../backends/backend-protocol.js';
import { buildRoutedBackend, filesystemBackends, parseBackendRoutes, type BackendSet } from '../backends/backend-routes.js';
import { createTenantStoreBackend } from '../backends/store-backend.js';
import { StateBackend } from '../backends/state-backend.js';
import type { AgentResolver, ResolvedAgent } from '../graph/resolved-agent.js';
import type { RunScope } from '../graph/run-scope.js';
import { DEFAULT_MODEL_NAME, type ChatModelProvider } from '../models/chat-model-provider.js';
import type { VfsService } from '@drydock/vfs';
import { DEFAULT_ASSISTANT_ID } from './agent-runtime.js';
import { DEFAULT_INSTRUCTIONS, networkInstructions } from './default-instructions.js';

// What the resolver needs of an agent definition (AgentDefinitionsService provides it).
export interface AgentDefinitionLike {
  id: string;
  name: string;
  instructions: string;
  model: string;
  tools: string[];
  backendRoutes: unknown[];
  template?: string | null;
  network?: { allow: string[] } | null;
  tier?: 'runc' | 'gvisor' | null;
  idleAction?: 'hibernate' | 'end' | null;
  updatedAt: Date | string;
}

export interface AgentDefinitionSource<D extends AgentDefinitionLike = AgentDefinitionLike> {
  // Throws AGENT_NOT_FOUND (404) for an unknown or another tenant's agent.
  get(tenantId: string, id: string): Promise<D>;
}

const CACHE_LIMIT = 500;

// Turns the default agent or a tenant's definition into the model, tools and backend a
// run uses. Built agents are cached by definition id and update time, so the model
// binding and backend are made once per version of a definition.
export class DefinitionAgentResolver<D extends AgentDefinitionLike = AgentDefinitionLike> implements AgentResolver {
  private readonly cache = new Map<string, ResolvedAgent>();
  private readonly backends: BackendSet;

  constructor(
    private readonly deps: {
      config: AppConfig['agent'];
      models: ChatModelProvider;
      builtinTools: ReadonlyMap<string, StructuredToolInterface>;
      pythonTools: (definition: D) => StructuredToolInterface[];
      definitions: AgentDefinitionSource<D>;
      sandbox: SandboxBackend;
      vfs: VfsService;
    },
  ) {
    const roots = Object.fromEntries(Object.entries(deps.config.filesystemRoots).map(([name, rootDir]) => [name, { rootDir, perTenant: true }]));
    this.backends = {
      threadStore: deps.sandbox,
      tenantStore: createTenantStoreBackend(deps.vfs),
      state: new StateBackend(),
      filesystem: filesystemBackends(roots),
    };
  }

  async resolve(scope: RunScope): Promise<ResolvedAgent> {
    if (scope.agentId === DEFAULT_ASSISTANT_ID) {
      return this.cached(DEFAULT_ASSISTANT_ID, () =>
        this.build(DEFAULT_INSTRUCTIONS, DEFAULT_MODEL_NAME, [...this.deps.builtinTools.values()], this.deps.sandbox, { template: null, network: null, tier: null, idleAction: null }),
      );
    }
    const definition = await this.deps.definitions.get(scope.tenantId, scope.agentId);
    const version = `${scope.tenantId}/${definition.id}@${new Date(definition.updatedAt).getTime()}`;
    return this.cached(version, () => {
      const builtins = definition.tools.flatMap((name) => {
        const tool = this.deps.builtinTools.get(name);
        return tool ? [tool] : [];
      });
      const routes = parseBackendRoutes(definition.backendRoutes, { filesystemRoots: this.filesystemRootsForRoutes() });
      const backend = buildRoutedBackend(routes, this.backends);
      const sessions = {
        template: definition.template ?? null,
        network: definition.network ?? null,
        tier: definition.tier ?? null,
        idleAction: definition.idleAction ?? null,
      };
      return this.build(definition.instructions, definition.model, [...builtins, ...this.deps.pythonTools(definition)], backend, sessions);
    });
  }

  private filesystemRootsForRoutes() {
    return Object.fromEntries(Object.entries(this.deps.config.filesystemRoots).map(([name, rootDir]) => [name, { rootDir }]));
  }

  private cached(key: string, build: () => ResolvedAgent): ResolvedAgent {
    let agent = this.cache.get(key);
    if (!agent) {
      agent = build();
      if (this.cache.size >= CACHE_LIMIT) this.cache.delete(this.cache.keys().next().value!);
      this.cache.set(key, agent);
    }
    return agent;
  }

  // `sessions`: what its threads' sessions start with.
  private build(
    instructions: string,
    modelName: string,
    tools: StructuredToolInterface[],
    backend: Backend,
    sessions: Pick<ResolvedAgent, 'template' | 'network' | 'tier' | 'idleAction'>,
  ): ResolvedAgent {
    const model = this.deps.models.get(modelName);
    if (typeof model.bindTools !== 'function') throw new Error(`the chat model for "${modelName}" cannot call tools`);
    return {
      // A definition's own words, then what its sessions' network allows.
      instructions: sessions.network ? `${instructions}\n\n${networkInstructions(sessions.network.allow)}` : instructions,
      model: tools.length ? model.bindTools(tools) : model,
      tools: new Map(tools.map((tool) => [tool.name, tool])),
      backend,
      sandbox: this.deps.sandbox,
      ...sessions,
    };
  }
}
