import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { StateSnapshot } from '@langchain/langgraph';
import { CheckpointCarrier, ThreadNotHeldError, withCheckpointCarrier, type AgentRuntime } from '@drydock/agents';
import { AgentRuntimeAccess } from './agent-runtime.access.js';
import {
  AGENT_THREADS_REPOSITORY,
  type AgentThreadRecord,
  type AgentThreadsRepository,
  type AgentThreadStatus,
} from './agent-threads.repository.js';
import type { CountThreadsDto, CreateThreadDto, PatchThreadDto, SearchThreadsDto } from './dto/threads.dto.js';
import type { StateAtCheckpointDto, ThreadHistoryDto, UpdateThreadStateDto } from './dto/thread-state.dto.js';
import { LangGraphError } from './langgraph.errors.js';
import { selectFields, type ThreadView, toThreadView } from './langgraph.views.js';
import { InputMessageError, parseInputMessages, toWire } from './message-serializer.js';
import { isUuid } from './run-request.js';
import { parseThreadId } from './thread-id.pipe.js';
import { toWireCheckpoint, toWireThreadState, type WireCheckpoint, type WireThreadState } from './thread-state.mapper.js';

// A run holds its thread with a heartbeat this often; a hold older than THREAD_STALE_MS
// (its gateway died) may be taken over.
export const THREAD_HEARTBEAT_MS = 10_000;
export const THREAD_STALE_MS = 60_000;
const DEFAULT_LIMIT = 10;
// Thread values are read from the checkpointer, a few threads at a time.
const VALUES_CONCURRENCY = 8;

// Threads of the LangGraph-compatible API: the tenant's own rows in agent_threads, their
// state in the agent's checkpointer. Another tenant's thread does not exist here.
@Injectable()
export class LangGraphThreadsService {
  constructor(
    @Inject(AGENT_THREADS_REPOSITORY) private readonly threads: AgentThreadsRepository,
    private readonly agent: AgentRuntimeAccess,
  ) {}

  async create(tenantId: string, dto: CreateThreadDto): Promise<ThreadView> {
    if (Array.isArray(dto.supersteps) ? dto.supersteps.length > 0 : dto.supersteps != null) {
      throw LangGraphError.unsupported('supersteps', 'create the thread, then POST its state');
    }
    if (dto.ttl != null) throw LangGraphError.unsupported('ttl', 'threads are kept until deleted');
    const threadId = dto.thread_id ? parseThreadId(dto.thread_id) : randomUUID();
    const { record, created } = await this.threads.create(tenantId, threadId, dto.metadata ?? {});
    if (created) return toThreadView(record, null);
    if ((dto.if_exists ?? 'raise') === 'raise') throw LangGraphError.threadExists(threadId);
    return toThreadView(record, await this.values(tenantId, threadId));
  }

  async get(tenantId: string, threadId: string): Promise<ThreadView> {
    const record = await this.require(tenantId, threadId);
    return toThreadView(record, await this.values(tenantId, threadId));
  }

  async patch(tenantId: string, threadId: string, dto: PatchThreadDto): Promise<ThreadView> {
    if (dto.ttl != null) throw LangGraphError.unsupported('ttl', 'threads are kept until deleted');
    const record = await this.threads.mergeMetadata(tenantId, threadId, dto.metadata ?? {});
    if (!record) throw LangGraphError.threadNotFound(threadId);
    return toThreadView(record, await this.values(tenantId, threadId));
  }

  // Removes the thread and its checkpoints (its files and sessions are the REST API's).
  async delete(tenantId: string, threadId: string): Promise<void> {
    const runtime = this.agent.get();
    await this.holding(tenantId, threadId, async (holdId) => {
      await runtime.deleteThread(tenantId, threadId);
      await this.threads.delete(tenantId, threadId, holdId);
    });
  }

  async search(tenantId: string, dto: SearchThreadsDto): Promise<Partial<ThreadView>[]> {
    refuseValuesFilter(dto.values);
    const ids = dto.ids?.map((id) => (isUuid(id) ? id.toLowerCase() : id));
    const records = await this.threads.search(tenantId, {
      ids,
      status: dto.status as AgentThreadStatus | undefined,
      metadata: dto.metadata,
      sortBy: dto.sort_by === 'state_updated_at' ? 'updated_at' : (dto.sort_by ?? 'created_at'),
      sortOrder: dto.sort_order ?? 'desc',
      limit: dto.limit ?? DEFAULT_LIMIT,
      offset: dto.offset ?? 0,
    });
    const withValues = !dto.select || dto.select.includes('values');
    const views: ThreadView[] = [];
    for (let i = 0; i < records.length; i += VALUES_CONCURRENCY) {
      const batch = records.slice(i, i + VALUES_CONCURRENCY);
      const values = await Promise.all(batch.map((r) => (withValues ? this.values(tenantId, r.threadId) : null)));
      batch.forEach((record, j) => views.push(toThreadView(record, values[j])));
    }
    return views.map((view) => selectFields(view, dto.select));
  }

  count(tenantId: string, dto: CountThreadsDto): Promise<number> {
    refuseValuesFilter(dto.values);
    return this.threads.count(tenantId, { status: dto.status as AgentThreadStatus | undefined, metadata: dto.metadata });
  }

  async getState(tenantId: string, threadId: string, checkpointId?: string): Promise<WireThreadState> {
    await this.require(tenantId, threadId);
    const runtime = this.agent.get();
    if (checkpointId !== undefined && !isUuid(checkpointId)) throw LangGraphError.invalidCheckpointId(checkpointId);
    const snapshot = await runtime.graph.getState(runtime.stateConfig(tenantId, threadId, checkpointId));
    if (checkpointId !== undefined && !hasCheckpoint(snapshot)) throw LangGraphError.checkpointNotFound(checkpointId);
    return toWireThreadState(snapshot, (id) => runtime.publicThreadId(id));
  }

  getStateAt(tenantId: string, threadId: string, dto: StateAtCheckpointDto): Promise<WireThreadState> {
    if (dto.subgraphs) throw LangGraphError.unsupported('subgraphs');
    return this.getState(tenantId, threadId, checkpointIdOf(dto.checkpoint));
  }

  // Applies `values` as if `as_node` had returned them (a new checkpoint); refused while
  // a run holds the thread.
  async updateState(tenantId: string, threadId: string, dto: UpdateThreadStateDto): Promise<{ checkpoint: WireCheckpoint | null }> {
    const runtime = this.agent.get();
    const values = parseStateValues(dto.values);
    const checkpointId = dto.checkpoint_id ?? checkpointIdOf(dto.checkpoint);
    if (checkpointId !== undefined && !isUuid(checkpointId)) throw LangGraphError.invalidCheckpointId(checkpointId);
    const next = await this.holding(tenantId, threadId, async (holdId) => {
      // Written only while this hold is the thread's, as a run's writes are (its release,
      // which always follows, waits for the WAL flush).
      const carrier = new CheckpointCarrier(false, this.threads.heldBy(tenantId, threadId, holdId));
      const config = withCheckpointCarrier(runtime.stateConfig(tenantId, threadId, checkpointId), carrier);
      try {
        return await runtime.graph.updateState(config, values, dto.as_node);
      } catch (error) {
        // LangGraph's InvalidUpdateError: an unknown node, an ambiguous update.
        if (error instanceof Error && /InvalidUpdate|EmptyChannel/.test(error.name)) {
          throw LangGraphError.invalidStateUpdate(error.message.split('\n')[0]!);
        }
        // The thread was deleted meanwhile: nothing was written.
        if (error instanceof ThreadNotHeldError) throw LangGraphError.threadNotFound(threadId);
        throw error;
      }
    });
    return { checkpoint: toWireCheckpoint(next, (id) => runtime.publicThreadId(id)) };
  }

  // The thread's states, newest first.
  async history(tenantId: string, threadId: string, dto: ThreadHistoryDto): Promise<WireThreadState[]> {
    await this.require(tenantId, threadId);
    const runtime = this.agent.get();
    if (dto.metadata && Object.keys(dto.metadata).length > 0) throw LangGraphError.unsupported('metadata', 'history is not filtered');
    const startId = checkpointIdOf(dto.checkpoint);
    const beforeId = beforeCheckpointId(dto.before);
    for (const id of [startId, beforeId]) if (id !== undefined && !isUuid(id)) throw LangGraphError.invalidCheckpointId(id);
    const limit = dto.limit ?? DEFAULT_LIMIT;
    const states: WireThreadState[] = [];
    const history = runtime.graph.getStateHistory(runtime.stateConfig(tenantId, threadId, startId), {
      limit,
      before: beforeId ? runtime.stateConfig(tenantId, threadId, beforeId) : undefined,
    });
    for await (const snapshot of history) {
      states.push(toWireThreadState(snapshot, (id) => runtime.publicThreadId(id)));
      if (states.length >= limit) break;
    }
    return states;
  }

  // The thread or 404: a missing thread and another tenant's look the same.
  async require(tenantId: string, threadId: string): Promise<AgentThreadRecord> {
    const record = await this.threads.find(tenantId, threadId);
    if (!record) throw LangGraphError.threadNotFound(threadId);
    return record;
  }

  // Runs `work` while holding the thread as a run would, so that it never interleaves
  // with a run (409 THREAD_BUSY if one holds it).
  private async holding<T>(tenantId: string, threadId: string, work: (holdId: string) => Promise<T>): Promise<T> {
    const holdId = randomUUID();
    const claim = await this.threads.claim(tenantId, threadId, holdId, THREAD_STALE_MS);
    if (claim === 'missing') throw LangGraphError.threadNotFound(threadId);
    if (claim === 'busy') throw LangGraphError.threadBusy(threadId);
    try {
      return await work(holdId);
    } finally {
      await this.threads.release(tenantId, threadId, holdId, null);
    }
  }

  private async values(tenantId: string, threadId: string): Promise<unknown> {
    if (!this.agent.available) return null;
    const runtime: AgentRuntime = this.agent.get();
    const snapshot = await runtime.graph.getState(runtime.stateConfig(tenantId, threadId));
    return toWire(snapshot.values ?? {});
  }
}

function hasCheckpoint(snapshot: StateSnapshot): boolean {
  return typeof snapshot.config?.configurable?.checkpoint_id === 'string' && snapshot.createdAt !== undefined;
}

function checkpointIdOf(checkpoint: Record<string, unknown> | undefined): string | undefined {
  const id = checkpoint?.checkpoint_id;
  if (id === undefined || id === null) return undefined;
  if (typeof id !== 'string') throw LangGraphError.invalidCheckpointId(String(id));
  return id;
}

function beforeCheckpointId(before: unknown): string | undefined {
  if (before === undefined || before === null) return undefined;
  if (typeof before === 'string') return before;
  const id = (before as RunnableConfig).configurable?.checkpoint_id;
  if (typeof id === 'string') return id;
  throw LangGraphError.invalidCheckpointId(JSON.stringify(before));
}

function refuseValuesFilter(values: unknown): void {
  if (values !== undefined && values !== null && !(typeof values === 'object' && Object.keys(values).length === 0)) {
    throw LangGraphError.unsupported('values', 'filter threads by metadata or status');
  }
}

function parseStateValues(raw: unknown): Record<string, unknown> {
  if (raw === undefined || raw === null) return {};
  if (typeof raw !== 'object' || Array.isArray(raw)) {
    throw LangGraphError.invalidStateUpdate('"values" must be an object of state keys, e.g. {"messages": [...]}');
  }
  const values: Record<string, unknown> = { ...(raw as Record<string, unknown>) };
  if (values.messages !== undefined && values.messages !== null) {
    try {
      values.messages = parseInputMessages(values.messages, 'values.messages');
    } catch (error) {
      if (error instanceof InputMessageError) throw LangGraphError.invalidStateUpdate(error.message);
      throw error;
    }
  }
  return values;
}
