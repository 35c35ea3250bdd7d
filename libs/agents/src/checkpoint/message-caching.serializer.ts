import { isBaseMessage, type BaseMessage } from '@langchain/core/messages';
import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint';

// The blob type of a message list stored as a change to an earlier version of the same
// channel: `drydock-messages-delta/<kept>/<base version>`. The blob holds the messages
// appended after the first <kept> messages of the base version, as a JSON list.
const DELTA_TYPE = /^drydock-messages-delta\/(\d+)\/(.+)$/s;

export function messagesDeltaType(kept: number, baseVersion: string): string {
  return `drydock-messages-delta/${kept}/${baseVersion}`;
}

// What loading a delta blob gives before the checkpointer rebuilds the list from its
// base (which only it can fetch).
export class MessagesDelta {
  constructor(
    readonly kept: number,
    readonly baseVersion: string,
    readonly appended: BaseMessage[],
  ) {}

  applyTo(base: BaseMessage[]): BaseMessage[] {
    if (base.length < this.kept) throw new Error(`a messages delta keeps ${this.kept} messages of a base that has ${base.length}`);
    return base.slice(0, this.kept).concat(this.appended);
  }
}

export function isMessageList(value: unknown): value is BaseMessage[] {
  return Array.isArray(value) && value.length > 0 && value.every((item) => isBaseMessage(item));
}

// LangGraph's JSON serializer, remembering each message's serialized form.
//
// Every checkpoint of a thread stores its message list (in full, or as a delta), so
// without this each run would serialize messages of the conversation again. A message
// in state is never changed in place (reducers replace it with a new object when its id
// is written again), so its JSON is computed once, kept as long as the message object
// lives, and a list is written by joining the parts. The bytes are the ones the stock
// serializer writes (it calls the same replacer element by element).
export class MessageCachingSerializer extends JsonPlusSerializer {
  private readonly parts = new WeakMap<BaseMessage, string>();
  private readonly decoder = new TextDecoder();
  private readonly encoder = new TextEncoder();

  // The JSON list of these messages, as the stock serializer would write it.
  messagesJson(messages: readonly BaseMessage[]): string {
    const parts = messages.map((message) => {
      let json = this.parts.get(message);
      if (json === undefined) {
        json = this.decoder.decode(super._dumps(message));
        this.parts.set(message, json);
      }
      return json;
    });
    return `[${parts.join(',')}]`;
  }

  dumpsMessages(messages: readonly BaseMessage[]): Uint8Array {
    return this.encoder.encode(this.messagesJson(messages));
  }

  protected override _dumps(obj: unknown): Uint8Array {
    return isMessageList(obj) ? this.dumpsMessages(obj) : super._dumps(obj);
  }

  override async loadsTyped(type: string, data: Uint8Array | string): Promise<any> {
    const delta = DELTA_TYPE.exec(type);
    if (!delta) return super.loadsTyped(type, data);
    const appended = (await super.loadsTyped('json', data)) as BaseMessage[];
    return new MessagesDelta(Number(delta[1]), delta[2], appended);
  }
}
