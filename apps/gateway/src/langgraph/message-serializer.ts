import {
  type AIMessage,
  type AIMessageChunk,
  type BaseMessage,
  coerceMessageLikeToMessage,
  isAIMessage,
  isBaseMessage,
  isBaseMessageChunk,
  isToolMessage,
} from '@langchain/core/messages';
import { JsonListBytes } from '@drydock/core';

// A message as the LangGraph Platform API and @langchain/langgraph-sdk write it: the
// LangChain message's fields in snake_case with a `type` of human | ai | tool | system |
// remove. Every message leaving the gateway goes through serializeMessage.
export interface WireMessage {
  type: string;
  content: unknown;
  id?: string;
  name?: string;
  additional_kwargs: Record<string, unknown>;
  response_metadata: Record<string, unknown>;
  tool_calls?: unknown[];
  invalid_tool_calls?: unknown[];
  tool_call_chunks?: unknown[];
  usage_metadata?: unknown;
  tool_call_id?: string;
  status?: string;
  artifact?: unknown;
}

export function serializeMessage(message: BaseMessage): WireMessage {
  const wire: WireMessage = {
    // AIMessageChunk and friends report their base type ("ai"), as the SDK expects.
    type: message.getType(),
    content: message.content,
    additional_kwargs: message.additional_kwargs ?? {},
    response_metadata: message.response_metadata ?? {},
  };
  if (message.id !== undefined) wire.id = message.id;
  if (message.name !== undefined) wire.name = message.name;
  // AIMessage and AIMessageChunk alike.
  if (isAIMessage(message)) {
    const ai = message as AIMessage | AIMessageChunk;
    wire.tool_calls = ai.tool_calls ?? [];
    wire.invalid_tool_calls = ai.invalid_tool_calls ?? [];
    if (ai.usage_metadata !== undefined) wire.usage_metadata = ai.usage_metadata;
    if (isBaseMessageChunk(message)) wire.tool_call_chunks = (message as AIMessageChunk).tool_call_chunks ?? [];
  }
  if (isToolMessage(message)) {
    wire.tool_call_id = message.tool_call_id;
    if (message.status !== undefined) wire.status = message.status;
    if (message.artifact !== undefined) wire.artifact = message.artifact;
  }
  return wire;
}

const MAX_DEPTH = 64;

// Deep copy of graph output (state values, updates, stream chunks) into plain JSON with
// every LangChain message serialised. Other class instances keep their own toJSON.
export function toWire(value: unknown): unknown {
  return convert(value, 0, new WeakSet());
}

function convert(value: unknown, depth: number, path: WeakSet<object>): unknown {
  if (value === null || typeof value !== 'object') return typeof value === 'bigint' ? value.toString() : value;
  if (isBaseMessage(value)) return serializeMessage(value);
  if (value instanceof Date) return value.toISOString();
  if (depth >= MAX_DEPTH || path.has(value)) return null;
  path.add(value);
  try {
    if (Array.isArray(value)) return value.map((item) => convert(item, depth + 1, path));
    const proto = Object.getPrototypeOf(value);
    if (proto !== Object.prototype && proto !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function') {
      return value;
    }
    const out: Record<string, unknown> = {};
    for (const [key, item] of Object.entries(value)) {
      if (item !== undefined && typeof item !== 'function') out[key] = convert(item, depth + 1, path);
    }
    return out;
  } finally {
    path.delete(value);
  }
}

// The UTF-8 bytes of JSON.stringify(toWire(value)), with each LangChain message's bytes
// taken from a cache.
//
// runs/wait answers the thread's whole state, so without the cache every run would
// serialize and encode the whole conversation again (on a long thread, more CPU than
// the rest of the run's answer). A message in state is never changed in place (reducers
// replace it with a new object when its id is written again, see docs/agent.md), so its
// bytes are computed once and kept as long as the message object lives; the answer is
// then mostly a copy of cached buffers.
export function wireJson(value: unknown): Buffer {
  const chunks = wireJsonChunks(value);
  return chunks.length === 1 ? chunks[0]! : Buffer.concat(chunks);
}

// The same bytes as chunks to be sent one after the other: a message list's bytes are
// the cache's own (JsonListBytes), so an answer sends the conversation without copying it.
export function wireJsonChunks(value: unknown): readonly Buffer[] {
  const out = new JsonBytes();
  if (!writeJson(value, 0, new WeakSet(), out)) out.text('null');
  return out.toChunks();
}

const messageBytes = new WeakMap<BaseMessage, Buffer>();

function cachedMessageBytes(message: BaseMessage): Buffer {
  let bytes = messageBytes.get(message);
  if (bytes === undefined) {
    bytes = Buffer.from(JSON.stringify(serializeMessage(message)));
    messageBytes.set(message, bytes);
  }
  return bytes;
}

// A list of messages only (a thread's `messages`): the state answered by the previous
// run of the thread, or the previous step of a stream, starts with the same messages, so
// its bytes are the start of this list's.
const messageLists = new JsonListBytes<object>((item) => (isBaseMessage(item) ? cachedMessageBytes(item) : undefined));

// Text and ready-made UTF-8 chunks, joined once.
class JsonBytes {
  private readonly chunks: Buffer[] = [];
  private pending = '';

  text(json: string): void {
    this.pending += json;
  }

  bytes(...chunks: readonly Buffer[]): void {
    this.flush();
    this.chunks.push(...chunks);
  }

  toChunks(): readonly Buffer[] {
    this.flush();
    return this.chunks;
  }

  private flush(): void {
    if (this.pending === '') return;
    this.chunks.push(Buffer.from(this.pending));
    this.pending = '';
  }
}

function hasOwnToJson(value: object): boolean {
  const proto = Object.getPrototypeOf(value);
  return proto !== Object.prototype && proto !== null && typeof (value as { toJSON?: unknown }).toJSON === 'function';
}

// Writes what JSON.stringify writes for convert(value, depth, path); false when that is
// nothing (an object member is then left out, an array item becomes null).
function writeJson(value: unknown, depth: number, path: WeakSet<object>, out: JsonBytes): boolean {
  if (value === null || typeof value !== 'object') {
    const json = typeof value === 'bigint' ? JSON.stringify(value.toString()) : JSON.stringify(value);
    if (json === undefined) return false;
    out.text(json);
    return true;
  }
  if (isBaseMessage(value)) {
    out.bytes(cachedMessageBytes(value));
    return true;
  }
  if (value instanceof Date) {
    out.text(JSON.stringify(value.toISOString()));
    return true;
  }
  if (depth >= MAX_DEPTH || path.has(value)) {
    out.text('null');
    return true;
  }
  if (hasOwnToJson(value)) {
    const json = JSON.stringify(value);
    if (json === undefined) return false;
    out.text(json);
    return true;
  }
  if (Array.isArray(value) && value.length > 0 && isBaseMessage(value[value.length - 1])) {
    const list = messageLists.chunks(value);
    if (list !== undefined) {
      out.bytes(...list);
      return true;
    }
  }
  path.add(value);
  try {
    if (Array.isArray(value)) {
      out.text('[');
      for (let i = 0; i < value.length; i++) {
        if (i > 0) out.text(',');
        if (!writeJson(value[i], depth + 1, path, out)) out.text('null');
      }
      out.text(']');
      return true;
    }
    out.text('{');
    let first = true;
    for (const [key, item] of Object.entries(value)) {
      if (item === undefined || typeof item === 'function' || typeof item === 'symbol') continue;
      // A toJSON that answers undefined leaves the member out.
      const own = item !== null && typeof item === 'object' && !isBaseMessage(item) && !(item instanceof Date) && hasOwnToJson(item) ? JSON.stringify(item) : null;
      if (own === undefined) continue;
      out.text(`${first ? '' : ','}${JSON.stringify(key)}:`);
      first = false;
      if (own !== null) out.text(own);
      else if (!writeJson(item, depth + 1, path, out)) out.text('null');
    }
    out.text('}');
    return true;
  } finally {
    path.delete(value);
  }
}

const MESSAGE_TYPES: Record<string, string> = {
  human: 'human',
  user: 'human',
  ai: 'ai',
  assistant: 'ai',
  system: 'system',
  developer: 'developer',
  tool: 'tool',
  remove: 'remove',
};
const MAX_INPUT_MESSAGES = 1000;

// Client messages in LangChain dict form ({role|type, content, ...}) → LangChain messages,
// so that a malformed one is a 400 before the run starts rather than a failed run.
// Only a message's own fields are taken; anything else in the dict is dropped.
export function parseInputMessages(raw: unknown, field = 'messages'): BaseMessage[] {
  const list = Array.isArray(raw) ? raw : [raw];
  if (list.length > MAX_INPUT_MESSAGES) {
    throw new InputMessageError(`"${field}" holds ${list.length} messages; at most ${MAX_INPUT_MESSAGES} are accepted at once`);
  }
  return list.map((item, index) => parseMessage(item, `${field}[${index}]`));
}

export class InputMessageError extends Error {}

function parseMessage(item: unknown, where: string): BaseMessage {
  if (typeof item === 'string') return coerceMessageLikeToMessage(item);
  if (item === null || typeof item !== 'object' || Array.isArray(item)) {
    throw new InputMessageError(`${where} must be an object like {"role": "user", "content": "..."}`);
  }
  const dict = item as Record<string, unknown>;
  const kind = typeof dict.type === 'string' ? dict.type : dict.role;
  const type = typeof kind === 'string' && Object.hasOwn(MESSAGE_TYPES, kind) ? MESSAGE_TYPES[kind] : undefined;
  if (!type) {
    throw new InputMessageError(
      `${where} needs a "role" or "type" of ${Object.keys(MESSAGE_TYPES).map((t) => `"${t}"`).join(', ')}`,
    );
  }
  const content = dict.content ?? (type === 'remove' ? '' : undefined);
  if (typeof content !== 'string' && !isContentBlocks(content)) {
    throw new InputMessageError(`${where}.content must be a string or a list of content blocks ({"type": ...})`);
  }
  const fields: Record<string, unknown> = { type, content };
  for (const key of ['id', 'name'] as const) {
    if (dict[key] === undefined || dict[key] === null) continue;
    if (typeof dict[key] !== 'string') throw new InputMessageError(`${where}.${key} must be a string`);
    fields[key] = dict[key];
  }
  for (const key of ['additional_kwargs', 'response_metadata'] as const) {
    if (dict[key] === undefined || dict[key] === null) continue;
    if (typeof dict[key] !== 'object' || Array.isArray(dict[key])) throw new InputMessageError(`${where}.${key} must be an object`);
    fields[key] = dict[key];
  }
  if (type === 'ai' && dict.tool_calls !== undefined && dict.tool_calls !== null) {
    if (!Array.isArray(dict.tool_calls) || !dict.tool_calls.every(isToolCall)) {
      throw new InputMessageError(`${where}.tool_calls must be a list of {"id", "name", "args": {...}}`);
    }
    fields.tool_calls = dict.tool_calls;
  }
  if (type === 'tool') {
    if (typeof dict.tool_call_id !== 'string' || dict.tool_call_id === '') {
      throw new InputMessageError(`${where} is a tool message and needs its "tool_call_id"`);
    }
    fields.tool_call_id = dict.tool_call_id;
  }
  if (type === 'remove' && typeof fields.id !== 'string') {
    throw new InputMessageError(`${where} is a remove message and needs the "id" of the message to remove`);
  }
  try {
    return coerceMessageLikeToMessage(fields as Parameters<typeof coerceMessageLikeToMessage>[0]);
  } catch (error) {
    throw new InputMessageError(`${where} is not a valid message (${error instanceof Error ? error.message.split('\n')[0] : 'unknown'})`);
  }
}

function isContentBlocks(value: unknown): boolean {
  return (
    Array.isArray(value) &&
    value.every((block) => typeof block === 'string' || (block !== null && typeof block === 'object' && typeof (block as { type?: unknown }).type === 'string'))
  );
}

function isToolCall(value: unknown): boolean {
  if (value === null || typeof value !== 'object') return false;
  const call = value as Record<string, unknown>;
  return typeof call.name === 'string' && call.args !== null && typeof call.args === 'object' && !Array.isArray(call.args);
}
