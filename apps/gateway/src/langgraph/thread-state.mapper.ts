import type { RunnableConfig } from '@langchain/core/runnables';
import type { StateSnapshot } from '@langchain/langgraph';
import { toWire } from './message-serializer.js';

// Shapes of the LangGraph Platform API (snake_case, as @langchain/langgraph-sdk reads them).
export interface WireCheckpoint {
  thread_id: string;
  checkpoint_ns: string;
  checkpoint_id: string | null;
  checkpoint_map: Record<string, unknown> | null;
}

export interface WireThreadTask {
  id: string;
  name: string;
  error: string | null;
  interrupts: unknown[];
  checkpoint: WireCheckpoint | null;
  state: WireThreadState | null;
  result: unknown;
}

export interface WireThreadState {
  values: unknown;
  next: string[];
  tasks: WireThreadTask[];
  checkpoint: WireCheckpoint | null;
  metadata: Record<string, unknown> | null;
  created_at: string | null;
  parent_checkpoint: WireCheckpoint | null;
}

// The checkpointer's thread key is tenant-qualified; clients only ever see theirs.
export type PublicThreadId = (checkpointThreadId: string) => string;

// Run and checkpoint metadata carry the run's configurable values (LangGraph copies
// them in): Drydock's own keys and LangGraph's internals stay on the server.
export function publicMetadata(metadata: unknown, publicThreadId: PublicThreadId): Record<string, unknown> | null {
  if (metadata === null || typeof metadata !== 'object') return null;
  const out: Record<string, unknown> = {};
  for (const [key, value] of Object.entries(metadata)) {
    if (isPrivateKey(key) || value === undefined) continue;
    out[key] = key === 'thread_id' && typeof value === 'string' ? publicThreadId(value) : toWire(value);
  }
  return out;
}

export function isPrivateKey(key: string): boolean {
  return key.startsWith('drydock_') || key.startsWith('__');
}

export function toWireCheckpoint(config: RunnableConfig | undefined, publicThreadId: PublicThreadId): WireCheckpoint | null {
  const configurable = config?.configurable;
  if (!configurable || typeof configurable.thread_id !== 'string' || typeof configurable.checkpoint_id !== 'string') {
    return null;
  }
  return {
    thread_id: publicThreadId(configurable.thread_id),
    checkpoint_ns: typeof configurable.checkpoint_ns === 'string' ? configurable.checkpoint_ns : '',
    checkpoint_id: configurable.checkpoint_id,
    checkpoint_map: isRecord(configurable.checkpoint_map) ? (toWire(configurable.checkpoint_map) as Record<string, unknown>) : null,
  };
}

export function toWireThreadState(snapshot: StateSnapshot, publicThreadId: PublicThreadId): WireThreadState {
  return {
    values: toWire(snapshot.values ?? {}),
    next: [...(snapshot.next ?? [])],
    tasks: (snapshot.tasks ?? []).map((task) => ({
      id: task.id,
      name: task.name,
      error: task.error == null ? null : task.error instanceof Error ? task.error.message : String(task.error),
      interrupts: toWire(task.interrupts ?? []) as unknown[],
      checkpoint: task.state && !isSnapshot(task.state) ? toWireCheckpoint(task.state, publicThreadId) : null,
      state: task.state && isSnapshot(task.state) ? toWireThreadState(task.state, publicThreadId) : null,
      result: toWire(task.result ?? null),
    })),
    checkpoint: toWireCheckpoint(snapshot.config, publicThreadId),
    metadata: publicMetadata(snapshot.metadata, publicThreadId),
    created_at: snapshot.createdAt ?? null,
    parent_checkpoint: toWireCheckpoint(snapshot.parentConfig, publicThreadId),
  };
}

function isSnapshot(state: RunnableConfig | StateSnapshot): state is StateSnapshot {
  return 'values' in state && 'next' in state;
}

function isRecord(value: unknown): value is Record<string, unknown> {
  return value !== null && typeof value === 'object' && !Array.isArray(value);
}
