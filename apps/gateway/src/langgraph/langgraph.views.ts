import type { AssistantInfo } from '@drydock/agents';
import type { AgentThreadRecord } from './agent-threads.repository.js';

// Response shapes of the LangGraph Platform API (schema.d.ts of @langchain/langgraph-sdk).
export interface AssistantView {
  assistant_id: string;
  graph_id: string;
  name: string;
  description: string | null;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  metadata: Record<string, unknown>;
  version: number;
  created_at: string;
  updated_at: string;
}

export interface ThreadView {
  thread_id: string;
  created_at: string;
  updated_at: string;
  state_updated_at: string;
  metadata: Record<string, unknown>;
  status: AgentThreadRecord['status'];
  values: unknown;
  interrupts: Record<string, unknown[]>;
  config: Record<string, unknown>;
  context: Record<string, unknown>;
  error: AgentThreadRecord['error'];
}

export function toAssistantView(info: AssistantInfo): AssistantView {
  return {
    assistant_id: info.assistantId,
    graph_id: info.graphId,
    name: info.name,
    description: info.description,
    config: {},
    context: {},
    metadata: info.metadata,
    // Assistants are not versioned here: one version, the current one.
    version: 1,
    created_at: info.createdAt,
    updated_at: info.updatedAt,
  };
}

export function toThreadView(record: AgentThreadRecord, values: unknown): ThreadView {
  return {
    thread_id: record.threadId,
    created_at: record.createdAt.toISOString(),
    updated_at: record.updatedAt.toISOString(),
    state_updated_at: record.updatedAt.toISOString(),
    metadata: record.metadata,
    status: record.status,
    values,
    interrupts: {},
    config: {},
    context: {},
    error: record.error,
  };
}

// `select` of the search routes: only the fields asked for.
export function selectFields<T extends object>(view: T, select: readonly string[] | undefined): Partial<T> {
  if (!select || select.length === 0) return view;
  return Object.fromEntries(Object.entries(view).filter(([key]) => select.includes(key))) as Partial<T>;
}
