import { isBaseMessage, type BaseMessage } from '@langchain/core/messages';
import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint';

// LangGraph's JSON serializer, remembering each message's serialized form.
//
// Every checkpoint of a thread stores its whole message list, so without this each run
// serializes every message of the conversation again, the cost growing with the thread.
// A message in state is never changed in place (reducers replace it with a new object
// when its id is written again), so its JSON is computed once, kept as long as the
// message object lives, and a list is written by joining the parts. The bytes are the
// ones the stock serializer writes (it calls the same replacer element by element), so
// anything that reads checkpoints reads these.
export class MessageCachingSerializer extends JsonPlusSerializer {
  private readonly parts = new WeakMap<BaseMessage, string>();
  private readonly decoder = new TextDecoder();
  private readonly encoder = new TextEncoder();

  protected override _dumps(obj: unknown): Uint8Array {
    if (!Array.isArray(obj) || obj.length === 0 || !obj.every((item) => isBaseMessage(item))) return super._dumps(obj);
    const parts = (obj as BaseMessage[]).map((message) => {
      let json = this.parts.get(message);
      if (json === undefined) {
        json = this.decoder.decode(super._dumps(message));
        this.parts.set(message, json);
      }
      return json;
    });
    return this.encoder.encode(`[${parts.join(',')}]`);
  }
}
