import {
  AIMessage,
  BaseMessageChunk,
  ChatMessage,
  FunctionMessage,
  HumanMessage,
  RemoveMessage,
  SystemMessage,
  ToolMessage,
  coerceMessageLikeToMessage,
  isBaseMessage,
  type BaseMessage,
  type BaseMessageLike,
} from '@langchain/core/messages';
import { v4 as uuid4 } from '@langchain/core/utils/uuid';
import { messagesStateReducer, type Messages } from '@langchain/langgraph';

// The ids of the messages in a list this reducer returned (or has seen): the ids it
// added to its parent list's, chained. Each list has its own (LangGraph applies a write
// to a scratch copy of the channels before the real one, so one set shared along the
// chain would see every new id as taken); chaining instead of copying keeps an append
// from costing the whole thread, and a long chain is flattened now and then.
interface IdIndex {
  readonly own: ReadonlySet<string>;
  readonly parent?: IdIndex;
  readonly depth: number;
}
const MAX_CHAIN = 32;
const knownIds = new WeakMap<readonly BaseMessage[], IdIndex>();

function hasId(index: IdIndex, id: string): boolean {
  for (let at: IdIndex | undefined = index; at; at = at.parent) if (at.own.has(id)) return true;
  return false;
}

function extend(index: IdIndex, added: Set<string>): IdIndex {
  if (index.depth + 1 < MAX_CHAIN) return { own: added, parent: index, depth: index.depth + 1 };
  const all = new Set(added);
  for (let at: IdIndex | undefined = index; at; at = at.parent) for (const id of at.own) all.add(id);
  return { own: all, depth: 0 };
}

// The `messages` channel's reducer: LangGraph's messagesStateReducer, with the common
// case made cheap. That reducer rebuilds an id index of the whole conversation on every
// write (four times per tool-calling turn), so its cost grows with the thread. When an
// update only appends messages with new ids, which is what the model and tool nodes
// do, this one appends them to the list and chains their ids to the list's. Anything else
// (a RemoveMessage, an id written again to replace a message, a list whose ids it has
// not seen) goes to messagesStateReducer, so the result is always the same as its.
export function appendMessages(left: BaseMessage[], right: Messages): BaseMessage[] {
  const ids = Array.isArray(left) ? idsOf(left) : undefined;
  if (!ids) return messagesStateReducer(left, right);

  const additions = (Array.isArray(right) ? right : [right]).map((item) => toMessage(item as BaseMessageLike));
  if (additions.some((message) => RemoveMessage.isInstance(message))) return messagesStateReducer(left, additions);
  for (const message of additions) {
    if (message.id === null || message.id === undefined) {
      message.id = uuid4();
      message.lc_kwargs.id = message.id;
    }
  }
  const fresh = new Set(additions.map((message) => message.id as string));
  if (fresh.size < additions.length || additions.some((message) => hasId(ids, message.id as string))) {
    return messagesStateReducer(left, additions);
  }

  const merged = left.concat(additions);
  knownIds.set(merged, extend(ids, fresh));
  return merged;
}

// undefined when a message is not a plain message with an id (the full reducer then
// coerces it and assigns one).
function idsOf(messages: readonly BaseMessage[]): IdIndex | undefined {
  const known = knownIds.get(messages);
  if (known) return known;
  const ids = new Set<string>();
  for (const message of messages) {
    if (!isBaseMessage(message) || BaseMessageChunk.isInstance(message) || message.id === null || message.id === undefined) return undefined;
    ids.add(message.id);
  }
  const index = { own: ids, depth: 0 };
  knownIds.set(messages, index);
  return index;
}

// Constructors taking one fields object (typed loosely: each class wants its own fields).
type MessageClass = new (fields: never) => BaseMessage;
const MESSAGE_CLASS_BY_TYPE: Record<string, MessageClass> = {
  human: HumanMessage,
  ai: AIMessage,
  system: SystemMessage,
  tool: ToolMessage,
  function: FunctionMessage,
  generic: ChatMessage,
};

// As messagesStateReducer coerces an update: message-likes become messages, and chunks
// (a streamed model reply) become their whole-message class.
function toMessage(item: BaseMessageLike): BaseMessage {
  const message = coerceMessageLikeToMessage(item);
  if (!BaseMessageChunk.isInstance(message)) return message;
  const MessageClass = MESSAGE_CLASS_BY_TYPE[message.getType()];
  if (MessageClass === undefined) return message;
  const fields = Object.fromEntries(
    Object.entries(message).filter(([key]) => key !== 'type' && key !== 'tool_call_chunks' && !key.startsWith('lc_')),
  );
  return new MessageClass(fields as never);
}
