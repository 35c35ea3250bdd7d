import { Logger } from '@nestjs/common';
import { CHECKPOINT_SCHEMA } from '../checkpoint/checkpoint-schema.js';
import type { RunnableConfig } from '@langchain/core/runnables';
import pg from 'pg';
import { DrydockError, type AppConfig } from '@drydock/core';
import { CachedPostgresSaver } from '../checkpoint/cached-postgres.saver.js';
import { ToolResultEvictor } from '../eviction/tool-result-eviction.js';
import { buildAgentGraph } from '../graph/agent-graph.js';
import type { AgentResolver } from '../graph/resolved-agent.js';
import type { ChatModelProvider } from '../models/chat-model-provider.js';
import { modelNotConfigured } from '../models/chat-model-provider.js';
import { CONFIG_AGENT_ID, CONFIG_TENANT_ID, CONFIG_THREAD_ID } from '../tools/tool-context.js';
import {
  DEFAULT_ASSISTANT_ID,
  type AgentGraph,
  type AgentRuntime,
  type AssistantInfo,
} from './agent-runtime.js';

// Where LangGraph's checkpointer keeps its tables (its own migrations, run at start-up).
export { CHECKPOINT_SCHEMA };
// A constant key for pg_advisory_lock so two gateways starting together do not both
// run the checkpointer's migrations.
const SETUP_LOCK_KEY = 0x64727964; // "dryd"

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
  private readonly pool: pg.Pool;
  private readonly checkpointer: CachedPostgresSaver;

  constructor(
    private readonly config: AppConfig,
    private readonly models: ChatModelProvider,
    resolver: AgentResolver,
    private readonly assistants: AssistantSource,
  ) {
    this.pool = new pg.Pool({ connectionString: config.databaseUrl, max: 10 });
    // An idle connection the server closed (a PostgreSQL restart) is an 'error' event
    // on the pool; without a listener it would take the gateway down. The pool drops
    // that connection and opens a new one on the next query.
    this.pool.on('error', (error) => new Logger(GraphAgentRuntime.name).warn(`checkpoint pool: ${error.message}`));
    this.checkpointer = new CachedPostgresSaver(this.pool, {
      schema: CHECKPOINT_SCHEMA,
      maxThreads: config.agent.checkpointCacheThreads,
    });
    const evictor = new ToolResultEvictor({
      thresholdChars: config.agent.evictionThresholdChars,
      maxKept: config.agent.maxEvictedResults,
    });
    this.graph = buildAgentGraph({ resolver, evictor, checkpointer: this.checkpointer }) as unknown as AgentGraph;
  }

  // Creates or upgrades the checkpointer's tables, once across concurrent starts.
  async setup(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [SETUP_LOCK_KEY]);
      try {
        await this.checkpointer.setup();
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [SETUP_LOCK_KEY]);
      }
    } finally {
      client.release();
    }
  }

  async close(): Promise<void> {
    await this.pool.end();
  }

  async runConfig(tenantId: string, threadId: string, assistantId: string): Promise<RunnableConfig> {
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
    } as RunnableConfig;
  }

  stateConfig(tenantId: string, threadId: string, checkpointId?: string): RunnableConfig {
    if (!tenantId || tenantId.includes(':')) throw new DrydockError('INVALID_TENANT', 'A tenant id is required.', 500);
    const configurable: Record<string, unknown> = { thread_id: `${tenantId}:${threadId}`, checkpoint_ns: '' };
    if (checkpointId) configurable.checkpoint_id = checkpointId;
    return { configurable };
  }

  publicThreadId(checkpointThreadId: string): string {
    const colon = checkpointThreadId.indexOf(':');
    return colon < 0 ? checkpointThreadId : checkpointThreadId.slice(colon + 1);
  }

  async deleteThread(tenantId: string, threadId: string): Promise<void> {
    await this.checkpointer.deleteThread(this.stateConfig(tenantId, threadId).configurable!.thread_id as string);
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
