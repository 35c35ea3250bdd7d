import type { RunnableConfig } from '@langchain/core/runnables';
import { DrydockError, type AppConfig } from '@drydock/core';
import { CHECKPOINT_SCHEMA } from '../checkpoint/checkpoint-schema.js';
import { CheckpointStore } from '../checkpoint/checkpoint-store.js';
import { ToolResultEvictor } from '../eviction/tool-result-eviction.js';
import { buildAgentGraph } from '../graph/agent-graph.js';
import type { AgentResolver } from '../graph/resolved-agent.js';
import type { ChatModelProvider } from '../models/chat-model-provider.js';
import { modelNotConfigured } from '../models/chat-model-provider.js';
import { CONFIG_AGENT_ID, CONFIG_TENANT_ID, CONFIG_THREAD_ID } from '../tools/tool-context.js';
import {
  DEFAULT_ASSISTANT_ID,
  type AgentGraph,
  type AgentRunConfig,
  type AgentRuntime,
  type AssistantInfo,
} from './agent-runtime.js';

// Where LangGraph's checkpointer keeps its tables (its own migrations, run at start-up).
export { CHECKPOINT_SCHEMA };

export interface AssistantSource {
  list(tenantId: string): Promise<AssistantInfo[]>;
  // Throws AGENT_NOT_FOUND (404).
  get(tenantId: string, assistantId: string): Promise<AssistantInfo>;
}

// The agent as the gateway hosts it: one compiled graph for every tenant, thread and
// assistant, its conversation state checkpointed in PostgreSQL under a tenant-qualified
// thread key so one tenant can never load another's checkpoints.
export class GraphAgentRuntime implements AgentRuntime {
  readonly graph: AgentGraph;
  private readonly checkpoints: CheckpointStore;

  constructor(
    private readonly config: AppConfig,
    private readonly models: ChatModelProvider,
    resolver: AgentResolver,
    private readonly assistants: AssistantSource,
  ) {
    this.checkpoints = new CheckpointStore({
      databaseUrl: config.databaseUrl,
      cacheThreads: config.agent.checkpointCacheThreads,
      cacheIdleMs: config.agent.checkpointCacheIdleMs,
    });
    const evictor = new ToolResultEvictor({
      thresholdChars: config.agent.evictionThresholdChars,
      maxKept: config.agent.maxEvictedResults,
    });
    this.graph = buildAgentGraph({ resolver, evictor, checkpointer: this.checkpoints.saver }) as unknown as AgentGraph;
  }

  // Creates or upgrades the checkpointer's tables, once across concurrent starts.
  setup(): Promise<void> {
    return this.checkpoints.setup();
  }

  close(): Promise<void> {
    return this.checkpoints.close();
  }

  async runConfig(tenantId: string, threadId: string, assistantId: string): Promise<AgentRunConfig> {
    if (!this.models.configured) throw modelNotConfigured();
    await this.assistants.get(tenantId, assistantId);
    return {
      configurable: {
        ...this.stateConfig(tenantId, threadId).configurable,
        [CONFIG_TENANT_ID]: tenantId,
        [CONFIG_THREAD_ID]: threadId,
        [CONFIG_AGENT_ID]: assistantId,
      },
      // Each model call and each tool round is a step; the limit stops a looping model.
      recursionLimit: this.config.agent.maxSteps * 2 + 1,
      durability: this.config.agent.checkpointDurability,
    };
  }

  stateConfig(tenantId: string, threadId: string, checkpointId?: string): RunnableConfig {
    const configurable: Record<string, unknown> = { thread_id: `${threadPrefix(tenantId)}${threadId}`, checkpoint_ns: '' };
    if (checkpointId) configurable.checkpoint_id = checkpointId;
    return { configurable };
  }

  publicThreadId(checkpointThreadId: string): string {
    const colon = checkpointThreadId.indexOf(':');
    return colon < 0 ? checkpointThreadId : checkpointThreadId.slice(colon + 1);
  }

  async deleteThread(tenantId: string, threadId: string): Promise<void> {
    await this.checkpoints.saver.deleteThread(this.stateConfig(tenantId, threadId).configurable!.thread_id as string);
  }

  forgetTenant(tenantId: string): number {
    return this.checkpoints.saver.forgetThreadsWithPrefix(threadPrefix(tenantId));
  }

  listAssistants(tenantId: string): Promise<AssistantInfo[]> {
    return this.assistants.list(tenantId);
  }

  getAssistant(tenantId: string, assistantId: string): Promise<AssistantInfo> {
    return this.assistants.get(tenantId, assistantId);
  }
}

export function defaultAssistant(): AssistantInfo {
  const epoch = new Date(0).toISOString();
  return {
    assistantId: DEFAULT_ASSISTANT_ID,
    graphId: 'agent',
    name: 'Drydock agent',
    description: 'The default agent: every built-in tool, the thread\'s files, the configured model.',
    createdAt: epoch,
    updatedAt: epoch,
    metadata: {},
  };
}

// How the checkpointer's thread keys of a tenant begin: `<tenantId>:`.
function threadPrefix(tenantId: string): string {
  if (!tenantId || tenantId.includes(':')) throw new DrydockError('INVALID_TENANT', 'A tenant id is required.', 500);
  return `${tenantId}:`;
}
