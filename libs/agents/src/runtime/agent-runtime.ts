import type { RunnableConfig } from '@langchain/core/runnables';
import type { StateSnapshot } from '@langchain/langgraph';

// What the HTTP layers (the LangGraph-compatible API, benches, tests) need from the agent:
// the compiled graph, built once at start-up, and the RunnableConfig that scopes a run or
// a state read to one tenant's thread and one assistant.

export const AGENT_RUNTIME = Symbol('AGENT_RUNTIME');

// The id of the assistant that exists for every tenant without an agent definition: all
// built-in tools, the thread's files, the configured default model.
export const DEFAULT_ASSISTANT_ID = 'agent';

export interface AssistantInfo {
  assistantId: string;
  // Always "agent": one graph serves every assistant.
  graphId: string;
  name: string;
  description: string | null;
  createdAt: string;
  updatedAt: string;
  // Extra, shown to clients as assistant config/metadata.
  metadata: Record<string, unknown>;
}

export type StreamMode = 'values' | 'updates' | 'messages';

// The subset of a compiled LangGraph graph the HTTP layer may use.
export interface AgentGraph {
  invoke(input: unknown, config: RunnableConfig): Promise<unknown>;
  stream(input: unknown, config: RunnableConfig & { streamMode: StreamMode[] }): Promise<AsyncIterable<[StreamMode, unknown]>>;
  getState(config: RunnableConfig): Promise<StateSnapshot>;
  getStateHistory(config: RunnableConfig, options?: { limit?: number; before?: RunnableConfig }): AsyncIterableIterator<StateSnapshot>;
  updateState(config: RunnableConfig, values: Record<string, unknown>, asNode?: string): Promise<RunnableConfig>;
}

// A run's config, with LangGraph's checkpoint durability for it (LangGraph's default,
// when absent, is "async").
export type AgentRunConfig = RunnableConfig & { durability?: 'exit' | 'async' | 'sync' };

export interface AgentRuntime {
  readonly graph: AgentGraph;
  // Config for a run. Throws DrydockError MODEL_NOT_CONFIGURED (503) when no model is
  // configured and AGENT_NOT_FOUND (404) when the assistant is not this tenant's.
  runConfig(tenantId: string, threadId: string, assistantId: string): Promise<AgentRunConfig>;
  // Config for reading or updating a thread's checkpointed state (no model needed).
  stateConfig(tenantId: string, threadId: string, checkpointId?: string): RunnableConfig;
  // The checkpointer's key of a thread is tenant-qualified; this maps it back.
  publicThreadId(checkpointThreadId: string): string;
  // Removes every checkpoint of the thread.
  deleteThread(tenantId: string, threadId: string): Promise<void>;
  // Drops what this process holds in memory of the tenant's threads (cached
  // checkpoints): deleting a tenant removes its rows, then calls this. The number of
  // threads dropped.
  forgetTenant(tenantId: string): number;
  listAssistants(tenantId: string): Promise<AssistantInfo[]>;
  // Throws AGENT_NOT_FOUND (404).
  getAssistant(tenantId: string, assistantId: string): Promise<AssistantInfo>;
}
