import { type BaseMessage, isBaseMessage, isBaseMessageChunk } from '@langchain/core/messages';
import type { StreamMode } from '@drydock/agents';
import { SerializedJson } from '../executions/sse-writer.js';
import { serializeMessage, toWire, wireJson } from './message-serializer.js';
import type { ClientStreamMode } from './run-request.js';
import { publicMetadata, type PublicThreadId } from './thread-state.mapper.js';

export interface RunEvent {
  event: string;
  data: unknown;
}

// Turns the graph's [mode, chunk] stream into the SSE events of the LangGraph Platform
// API for the modes the client asked for:
//   values          → `values` (the state after each step)
//   updates         → `updates` ({node: update})
//   messages        → `messages/metadata` (first chunk of a message), `messages/partial`
//                     (the message so far) and `messages/complete` (messages that reached
//                     the state, each once)
//   messages-tuple  → `messages` ([message chunk, metadata])
// One instance per run: it remembers which messages it has seen.
export class RunEventTranslator {
  private readonly partial = new Map<string, BaseMessage>();
  private readonly completed = new Set<string>();
  // The last `values` chunk: the run's result for runs/wait.
  lastValues: unknown = undefined;

  constructor(
    private readonly modes: readonly ClientStreamMode[],
    private readonly publicThreadId: PublicThreadId,
  ) {}

  translate(mode: StreamMode, chunk: unknown): RunEvent[] {
    const events: RunEvent[] = [];
    if (mode === 'values') {
      this.lastValues = chunk;
      // The whole state after each step: its bytes from the message caches (wireJson), as
      // runs/wait answers it, rather than the state serialized again per event.
      if (this.modes.includes('values')) events.push({ event: 'values', data: new SerializedJson(wireJson(chunk)) });
      if (this.modes.includes('messages')) events.push(...this.completedMessages(chunk));
    } else if (mode === 'updates') {
      if (this.modes.includes('updates')) events.push({ event: 'updates', data: toWire(chunk) });
    } else if (mode === 'messages') {
      const [message, metadata] = Array.isArray(chunk) ? chunk : [chunk, {}];
      if (!isBaseMessage(message)) return events;
      const meta = publicMetadata(metadata, this.publicThreadId) ?? {};
      if (this.modes.includes('messages-tuple')) events.push({ event: 'messages', data: [serializeMessage(message), meta] });
      if (this.modes.includes('messages')) events.push(...this.partialMessage(message, meta));
    }
    return events;
  }

  private partialMessage(message: BaseMessage, metadata: Record<string, unknown>): RunEvent[] {
    const id = message.id;
    if (!id) return [];
    const events: RunEvent[] = [];
    const previous = this.partial.get(id);
    let current = message;
    if (!previous) {
      events.push({ event: 'messages/metadata', data: { [id]: { metadata } } });
    } else if (isBaseMessageChunk(previous) && isBaseMessageChunk(message)) {
      current = previous.concat(message);
    }
    this.partial.set(id, current);
    events.push({ event: 'messages/partial', data: [serializeMessage(current)] });
    return events;
  }

  private completedMessages(values: unknown): RunEvent[] {
    const messages = (values as { messages?: unknown } | null)?.messages;
    if (!Array.isArray(messages)) return [];
    const fresh: BaseMessage[] = [];
    for (const message of messages) {
      if (!isBaseMessage(message) || !message.id || this.completed.has(message.id)) continue;
      this.completed.add(message.id);
      this.partial.delete(message.id);
      fresh.push(message);
    }
    // The first state of a run holds the whole thread: its bytes come from the message caches.
    return fresh.length > 0 ? [{ event: 'messages/complete', data: new SerializedJson(wireJson(fresh)) }] : [];
  }
}
