import type { OnApplicationShutdown, Provider } from '@nestjs/common';
import { APP_CONFIG, TenantsService, type AppConfig } from '@drydock/core';
import { SessionCommandsService, SessionExecutionsService, SessionsService } from '@drydock/sessions';
import { VfsService } from '@drydock/vfs';
import { AgentDefinitionsService } from '../definitions/agent-definitions.service.js';
import type { AgentDefinition } from '../definitions/agent-definition.js';
import { CHAT_MODEL_PROVIDER, type ChatModelProvider } from '../models/chat-model-provider.js';
import { OpenAiCompatibleModelProvider } from '../models/openai-compatible.provider.js';
import { createAgentPythonTools } from '../python-tools/python-function-tool.js';
import { SessionSandboxBackend } from '../sandbox/session-sandbox.backend.js';
import { createBuiltinTools } from '../tools/index.js';
import { DefinitionAgentResolver } from './agent-resolver.js';
import { AGENT_RUNTIME, DEFAULT_ASSISTANT_ID, type AssistantInfo } from './agent-runtime.js';
import { defaultAssistant, GraphAgentRuntime, type AssistantSource } from './graph-agent.runtime.js';

// A chat model provider that replaces the configured one (tests and benches bind a
// scripted provider here; production leaves it null).
export const CHAT_MODEL_OVERRIDE = Symbol('CHAT_MODEL_OVERRIDE');

// The agent's providers for the app that hosts it (the gateway). Needs VfsService,
// SessionsService, SessionExecutionsService, SessionCommandsService, TenantsService and
// AgentDefinitionsService in the same module.
export function agentRuntimeProviders(chatModels: ChatModelProvider | null = null): Provider[] {
  return [
    { provide: CHAT_MODEL_OVERRIDE, useValue: chatModels },
    {
      provide: CHAT_MODEL_PROVIDER,
      inject: [APP_CONFIG, CHAT_MODEL_OVERRIDE],
      useFactory: (config: AppConfig, override: ChatModelProvider | null) =>
        override ?? new OpenAiCompatibleModelProvider(config.agent),
    },
    {
      provide: SessionSandboxBackend,
      inject: [VfsService, SessionsService, SessionExecutionsService, SessionCommandsService, TenantsService],
      useFactory: (
        vfs: VfsService,
        sessions: SessionsService,
        executions: SessionExecutionsService,
        commands: SessionCommandsService,
        tenants: TenantsService,
      ) => new SessionSandboxBackend(vfs, sessions, executions, commands, tenants),
    },
    {
      provide: AGENT_RUNTIME,
      inject: [APP_CONFIG, CHAT_MODEL_PROVIDER, SessionSandboxBackend, VfsService, AgentDefinitionsService],
      useFactory: async (
        config: AppConfig,
        models: ChatModelProvider,
        sandbox: SessionSandboxBackend,
        vfs: VfsService,
        definitions: AgentDefinitionsService,
      ) => {
        const resolver = new DefinitionAgentResolver<AgentDefinition>({
          config: config.agent,
          models,
          builtinTools: createBuiltinTools(),
          pythonTools: createAgentPythonTools,
          definitions,
          sandbox,
          vfs,
        });
        const runtime = new ClosingGraphAgentRuntime(config, models, resolver, assistantsOf(definitions));
        await runtime.setup();
        return runtime;
      },
    },
  ];
}

// Nest calls lifecycle hooks on factory-made providers too: the checkpointer's pool
// closes with the app.
class ClosingGraphAgentRuntime extends GraphAgentRuntime implements OnApplicationShutdown {
  onApplicationShutdown(): Promise<void> {
    return this.close();
  }
}

function assistantsOf(definitions: AgentDefinitionsService): AssistantSource {
  const view = (definition: AgentDefinition): AssistantInfo => ({
    assistantId: definition.id,
    graphId: 'agent',
    name: definition.name,
    description: definition.instructions.slice(0, 200) || null,
    createdAt: new Date(definition.createdAt).toISOString(),
    updatedAt: new Date(definition.updatedAt).toISOString(),
    metadata: { model: definition.model, tools: definition.tools },
  });
  return {
    async list(tenantId) {
      return [defaultAssistant(), ...(await definitions.list(tenantId)).map(view)];
    },
    async get(tenantId, assistantId) {
      if (assistantId === DEFAULT_ASSISTANT_ID) return defaultAssistant();
      return view(await definitions.get(tenantId, assistantId));
    },
  };
}
