import type { BaseMessage } from '@langchain/core/messages';
import { Annotation, type Messages } from '@langchain/langgraph';
import type { StateFiles, StateFilesUpdate } from '../backends/backend-protocol.js';
import { mergeStateFiles } from '../backends/state-backend.js';
import { appendMessages } from './append-messages.js';

// What the tool node extracted for one tool call: a fenced block's content, or the
// sentence telling the model why no block could be assigned.
export type ExtractedContent = { content: string } | { error: string };
// Keyed by tool call id; null removes the entry (the tool node clears what it used).
export type ExtractedUpdate = Record<string, ExtractedContent | null>;

function mergeExtracted(
  left: Record<string, ExtractedContent> | undefined,
  right: ExtractedUpdate | undefined,
): Record<string, ExtractedContent> {
  const result = { ...(left ?? {}) };
  for (const [id, value] of Object.entries(right ?? {})) {
    if (value === null) delete result[id];
    else result[id] = value;
  }
  return result;
}

// The conversation state the checkpointer keeps per thread: the messages, the files of
// state-backed routes, and content extracted for the pending tool calls (cleared by the
// tool node's Command once used, so code and file bodies are not kept twice).
export const AgentStateAnnotation = Annotation.Root({
  // As LangGraph's MessagesAnnotation, with a reducer whose cost does not grow with the
  // conversation when messages are only appended.
  messages: Annotation<BaseMessage[], Messages>({
    reducer: appendMessages,
    default: () => [],
  }),
  files: Annotation<StateFiles, StateFilesUpdate>({
    reducer: mergeStateFiles,
    default: () => ({}),
  }),
  extracted: Annotation<Record<string, ExtractedContent>, ExtractedUpdate>({
    reducer: mergeExtracted,
    default: () => ({}),
  }),
});

export type AgentState = typeof AgentStateAnnotation.State;
export type AgentStateUpdate = typeof AgentStateAnnotation.Update;
