import type { BaseMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import type { StreamMode } from '@drydock/agents';
import type { RunCreateDto } from './dto/run-create.dto.js';
import { LangGraphError } from './langgraph.errors.js';
import { InputMessageError, parseInputMessages } from './message-serializer.js';
import { isPrivateKey } from './thread-state.mapper.js';

// What a client may ask to stream. "messages" is the LangGraph Platform's own mode
// (messages/partial, messages/complete, messages/metadata); "messages-tuple" is the
// graph's messages mode passed through as `messages` events.
export const CLIENT_STREAM_MODES = ['values', 'updates', 'messages', 'messages-tuple'] as const;
export type ClientStreamMode = (typeof CLIENT_STREAM_MODES)[number];

// Upper bound of config.recursion_limit when the agent runtime sets none.
export const MAX_RECURSION_LIMIT = 1000;

export interface RunPlan {
  assistantId: string;
  input: Record<string, unknown> | null;
  streamModes: ClientStreamMode[];
  // The graph modes needed to produce the client's modes.
  graphModes: StreamMode[];
  checkpointId?: string;
  tags: string[];
  recursionLimit?: number;
  configurable: Record<string, unknown>;
  metadata: Record<string, unknown>;
  ifNotExists: 'create' | 'reject';
}

const UUID = /^[0-9a-f]{8}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{4}-[0-9a-f]{12}$/i;

export function isUuid(value: string): boolean {
  return UUID.test(value);
}

// Configurable keys a client never sets: the thread and checkpoint come from the route
// and body, tenant and agent from the API key (drydock_*), and LangGraph's internals (__*).
const RESERVED_CONFIGURABLE = new Set(['thread_id', 'checkpoint_id', 'checkpoint_ns', 'checkpoint_map']);

export function planRun(dto: RunCreateDto, defaultModes: ClientStreamMode[]): RunPlan {
  refuseUnsupported(dto);
  const streamModes = parseStreamModes(dto.stream_mode, defaultModes);
  const graphModes = new Set<StreamMode>();
  for (const mode of streamModes) {
    if (mode === 'values' || mode === 'updates') graphModes.add(mode);
    if (mode === 'messages-tuple') graphModes.add('messages');
    // messages/complete comes from the values, messages/partial from the graph's messages.
    if (mode === 'messages') graphModes.add('messages').add('values');
  }
  return {
    assistantId: dto.assistant_id,
    input: parseInput(dto.input),
    streamModes,
    graphModes: [...graphModes],
    checkpointId: parseCheckpointId(dto),
    tags: dto.config?.tags ?? [],
    recursionLimit: dto.config?.recursion_limit,
    configurable: publicEntries(dto.config?.configurable, RESERVED_CONFIGURABLE),
    metadata: { ...publicEntries(dto.config?.metadata), ...publicEntries(dto.metadata) },
    ifNotExists: dto.if_not_exists ?? 'reject',
  };
}

// The run's RunnableConfig: the runtime's (tenant, thread, assistant, model) wins over
// anything the client sent; the client adds tags, metadata and its own configurable keys,
// and may lower the recursion limit (or raise it up to MAX_RECURSION_LIMIT when the
// runtime sets none).
export function buildRunConfig(runtimeConfig: RunnableConfig, plan: RunPlan, signal: AbortSignal): RunnableConfig {
  const configurable: Record<string, unknown> = { ...plan.configurable, ...runtimeConfig.configurable };
  if (plan.checkpointId) configurable.checkpoint_id = plan.checkpointId;
  const ceiling = runtimeConfig.recursionLimit ?? MAX_RECURSION_LIMIT;
  const config: RunnableConfig = {
    ...runtimeConfig,
    configurable,
    tags: [...new Set([...(runtimeConfig.tags ?? []), ...plan.tags])],
    metadata: { ...plan.metadata, ...runtimeConfig.metadata },
    signal: runtimeConfig.signal ? AbortSignal.any([runtimeConfig.signal, signal]) : signal,
  };
  if (plan.recursionLimit !== undefined) config.recursionLimit = Math.min(plan.recursionLimit, ceiling);
  return config;
}

function refuseUnsupported(dto: RunCreateDto): void {
  if (dto.command != null) throw LangGraphError.unsupported('command', 'send new input instead (interrupts are not used by this agent)');
  if (isSet(dto.interrupt_before)) throw LangGraphError.unsupported('interrupt_before');
  if (isSet(dto.interrupt_after)) throw LangGraphError.unsupported('interrupt_after');
  if (isSet(dto.webhook)) throw LangGraphError.unsupported('webhook');
  if (dto.after_seconds) throw LangGraphError.unsupported('after_seconds', 'runs start at once');
  if (dto.context && Object.keys(dto.context).length > 0) {
    throw LangGraphError.unsupported('context', 'pass run settings in "config.configurable"');
  }
  if (dto.multitask_strategy && dto.multitask_strategy !== 'reject') {
    throw LangGraphError.unsupported(
      `multitask_strategy: ${dto.multitask_strategy}`,
      'a thread runs one run at a time and a second one is refused with 409 THREAD_BUSY ("reject")',
    );
  }
}

function isSet(value: unknown): boolean {
  return value != null && !(Array.isArray(value) && value.length === 0);
}

function parseStreamModes(raw: unknown, defaults: ClientStreamMode[]): ClientStreamMode[] {
  if (raw == null) return defaults;
  const list = Array.isArray(raw) ? raw : [raw];
  if (list.length === 0) return defaults;
  for (const mode of list) {
    if (!(CLIENT_STREAM_MODES as readonly unknown[]).includes(mode)) throw LangGraphError.invalidStreamMode(mode, CLIENT_STREAM_MODES);
  }
  return [...new Set(list as ClientStreamMode[])];
}

function parseInput(raw: RunCreateDto['input']): Record<string, unknown> | null {
  if (raw == null) return null;
  const input: Record<string, unknown> = { ...raw };
  if (input.messages !== undefined && input.messages !== null) {
    try {
      input.messages = parseInputMessages(input.messages) satisfies BaseMessage[];
    } catch (error) {
      if (error instanceof InputMessageError) throw LangGraphError.invalidInput(error.message);
      throw error;
    }
  }
  return input;
}

function parseCheckpointId(dto: RunCreateDto): string | undefined {
  const fromCheckpoint = dto.checkpoint?.checkpoint_id;
  const id = dto.checkpoint_id ?? (typeof fromCheckpoint === 'string' ? fromCheckpoint : undefined);
  if (id === undefined) return undefined;
  if (!isUuid(id)) throw LangGraphError.invalidCheckpointId(id);
  return id;
}

function publicEntries(record: Record<string, unknown> | undefined, reserved?: Set<string>): Record<string, unknown> {
  if (!record) return {};
  return Object.fromEntries(Object.entries(record).filter(([key]) => !isPrivateKey(key) && !reserved?.has(key)));
}
