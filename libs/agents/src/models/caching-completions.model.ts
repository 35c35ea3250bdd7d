import type { CallbackManagerForLLMRun } from '@langchain/core/callbacks/manager';
import type { ChatModelStreamEvent } from '@langchain/core/language_models/event';
import type { BaseMessage } from '@langchain/core/messages';
import type { ChatGenerationChunk, ChatResult } from '@langchain/core/outputs';
import { ChatOpenAICompletions, wrapOpenAIClientError } from '@langchain/openai';
import { JsonListBytes, ListPrefixMemo } from '@drydock/core';
import { DirectChatCompletions } from './direct-completions.js';

type CallOptions = ChatOpenAICompletions['ParsedCallOptions'];

// ChatOpenAICompletions that does not convert and serialize the whole conversation
// again for every model call.
//
// Each call sends every message of the thread. The stock client maps each LangChain
// message to a chat completions message and then JSON.stringify's the whole request:
// on a long thread, the larger part of a model call's CPU in the gateway. A message in
// state is never changed in place (see docs/agent.md), so here each message's mapped
// form and its JSON are kept as long as the message object lives, and the request body
// is the request's other fields with the cached JSON of the messages spliced in, and of
// the tools (the same definition objects on every call of a bound model). The bytes sent
// are the ones the stock client sends (the same mapping, the same JSON.stringify per
// message and per tool).
//
// Two seams of the libraries are used, each failing safe: the mapping is
// `messages.flatMap(convert)` in @langchain/openai (the list handed to it memoizes
// flatMap; were it not called, every message would be converted as before), and the
// OpenAI client sends a `body` of bytes from the request options verbatim.
//
// A request that does not stream is sent without the OpenAI client (direct-completions.ts:
// the same URL, headers and bytes, the same answer and errors, inside LangChain's own
// retries); a streaming one, or one with per-call options, goes through the client.
export class CachingChatOpenAICompletions extends ChatOpenAICompletions {
  // Per message: what @langchain/openai maps it to (one param, or several).
  private readonly params = new WeakMap<BaseMessage, unknown>();
  // Per conversation: the params of its messages as last mapped, found again by the next
  // call's list, which starts with the same messages.
  private readonly lists = new ListPrefixMemo<BaseMessage, unknown[]>();
  // Requests that do not stream, sent as the client would send them (direct-completions.ts),
  // unless the client config holds something a direct request would leave out.
  private readonly direct = Object.entries(this.clientConfig).every(([key, value]) => value === undefined || DIRECT_CLIENT_CONFIG.has(key))
    ? new DirectChatCompletions(
        () => ({ options: this._getClientOptions(undefined), client: this.client }),
        (this.clientConfig.fetch as typeof fetch | undefined) ?? ((input, init) => fetch(input, init)),
      )
    : undefined;

  override async _generate(messages: BaseMessage[], options: CallOptions, runManager?: CallbackManagerForLLMRun): Promise<ChatResult> {
    return super._generate(MemoizedMessageList.wrap(messages, this.params, this.lists), options, runManager);
  }

  override async *_streamResponseChunks(
    messages: BaseMessage[],
    options: CallOptions,
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatGenerationChunk> {
    yield* super._streamResponseChunks(MemoizedMessageList.wrap(messages, this.params, this.lists), options, runManager);
  }

  override async *_streamChatModelEvents(
    messages: BaseMessage[],
    options: CallOptions,
    runManager?: CallbackManagerForLLMRun,
  ): AsyncGenerator<ChatModelStreamEvent> {
    yield* super._streamChatModelEvents(MemoizedMessageList.wrap(messages, this.params, this.lists), options, runManager);
  }

  // The request as the stock client would write it, from the messages' cached JSON.
  override completionWithRetry(request: any, requestOptions?: any): Promise<any> {
    if (!Array.isArray(request?.messages) || requestOptions?.body !== undefined) return super.completionWithRetry(request, requestOptions);
    const body = requestBody(request);
    const direct = this.direct;
    if (direct && sendsDirect(request, requestOptions)) {
      const { maxRetries, signal } = requestOptions ?? {};
      // LangChain's retries around one attempt, and its error mapping, as for the client.
      return this.caller.callWithOptions({ maxRetries }, async () => {
        try {
          return await direct.create(body, signal);
        } catch (error) {
          throw wrapOpenAIClientError(error);
        }
      });
    }
    return super.completionWithRetry(request, {
      ...requestOptions,
      body: Buffer.concat(body),
      headers: { ...requestOptions?.headers, 'content-type': 'application/json' },
    });
  }
}

// A request is sent directly unless it streams, asks for a parsed format, or carries
// per-call options (headers, a timeout...): those go through the client.
function sendsDirect(request: any, requestOptions: Record<string, unknown> | undefined): boolean {
  if (request.stream || request.response_format?.type === 'json_schema') return false;
  return !requestOptions || Object.entries(requestOptions).every(([key, value]) => value === undefined || DIRECT_REQUEST_OPTIONS.has(key));
}

// What a direct request carries over: the retries (LangChain's) and the run's signal.
const DIRECT_REQUEST_OPTIONS = new Set(['maxRetries', 'signal']);
// Client settings a direct request honours: the URL, key and headers come from the
// client's own request building, the fetch is the one given.
const DIRECT_CLIENT_CONFIG = new Set(['apiKey', 'baseURL', 'organization', 'project', 'defaultHeaders', 'defaultQuery', 'fetch', 'dangerouslyAllowBrowser']);

// A message list whose flatMap remembers, per message, what the callback gave for it,
// and per conversation, the whole mapped list.
class MemoizedMessageList extends Array<BaseMessage> {
  private memo!: WeakMap<BaseMessage, unknown>;
  private lists!: ListPrefixMemo<BaseMessage, unknown[]>;

  static wrap(messages: BaseMessage[], memo: WeakMap<BaseMessage, unknown>, lists: ListPrefixMemo<BaseMessage, unknown[]>): BaseMessage[] {
    const list = new MemoizedMessageList();
    for (const message of messages) list.push(message);
    list.memo = memo;
    list.lists = lists;
    return list;
  }

  // Arrays made from this one (map, filter, slice) are plain arrays.
  static override get [Symbol.species]() {
    return Array;
  }

  override flatMap<U>(callback: (value: BaseMessage, index: number, array: BaseMessage[]) => U | readonly U[]): U[] {
    // The messages the previous call of this conversation mapped, mapped the same way.
    const found = this.lists.find(this);
    const out = (found ? found.value.slice() : []) as U[];
    for (let i = found?.length ?? 0; i < this.length; i++) {
      const message = this[i]!;
      let mapped = this.memo.get(message) as U | readonly U[] | undefined;
      if (mapped === undefined) {
        mapped = callback(message, i, this);
        this.memo.set(message, mapped);
      }
      if (Array.isArray(mapped)) out.push(...(mapped as readonly U[]));
      else out.push(mapped as U);
    }
    // A copy: the caller may change the list it gets.
    this.lists.remember(this, out.slice(), found?.length);
    return out;
  }
}

const paramJson = new WeakMap<object, Buffer>();

// A message param's or a tool definition's JSON, kept as long as the object lives.
function paramBytes(param: object): Buffer {
  let json = paramJson.get(param);
  if (json === undefined) {
    json = Buffer.from(JSON.stringify(param) ?? 'null');
    paramJson.set(param, json);
  }
  return json;
}

// The request's lists written from their items' cached JSON. The messages of successive
// requests of a thread: each list starts with the previous one's, so its bytes are the
// previous bytes with the new messages' written after them (JsonListBytes). The tools:
// the model bound them once (agent-resolver.ts) and the client hands the same definition
// objects to every request, so the list's bytes are the previous request's.
const CACHED_LISTS = ['messages', 'tools'] as const;
const paramLists = new JsonListBytes<object>(paramBytes);

// Placeholders no request field holds, replaced by each list's JSON.
const MARKERS = CACHED_LISTS.map((field) => {
  const marker = `\u0000drydock-${field}\u0000`;
  return { field, marker, member: `"${field}":${JSON.stringify(marker)}` };
});

// The UTF-8 bytes of JSON.stringify(request), with the messages' and the tools' bytes from
// the caches, as chunks to send one after the other (so neither a whole-body string nor
// its encoding is made per call, and the conversation's bytes are not copied).
function requestBody(request: Record<string, unknown>): Buffer[] {
  const lists = MARKERS.filter(({ field }) => Array.isArray(request[field]));
  const rest = JSON.stringify({ ...request, ...Object.fromEntries(lists.map(({ field, marker }) => [field, marker])) });
  const parts: Buffer[] = [];
  let from = 0;
  for (const { field, member, at } of lists.map((list) => ({ ...list, at: rest.indexOf(list.member) })).sort((a, b) => a.at - b.at)) {
    const items = request[field] as unknown[];
    // Items that are not objects (none the client makes) are written as they are.
    parts.push(Buffer.from(`${rest.slice(from, at)}"${field}":`), ...(paramLists.chunks(items) ?? [Buffer.from(JSON.stringify(items))]));
    from = at + member.length;
  }
  parts.push(Buffer.from(rest.slice(from)));
  return parts;
}
