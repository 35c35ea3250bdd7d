import { jest } from '@jest/globals';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { JsonPlusSerializer } from '@langchain/langgraph-checkpoint';
import { MessageCachingSerializer, MessagesDelta, messagesDeltaType } from './message-caching.serializer.js';

const text = (bytes: Uint8Array) => new TextDecoder().decode(bytes);

function conversation(): BaseMessage[] {
  return [
    new HumanMessage({ content: 'plot it', id: 'h1' }),
    new AIMessage({
      content: 'sure `code` "quoted" \u2603',
      id: 'a1',
      tool_calls: [{ id: 'c1', name: 'execute_python', args: { code: 'print(1)\n' }, type: 'tool_call' }],
    }),
    new ToolMessage({ content: '1\n', tool_call_id: 'c1', id: 't1', artifact: { execution: { id: 'exe_1' } } }),
  ];
}

describe('MessageCachingSerializer', () => {
  it('writes a message list byte for byte as the stock serializer does, and reads it back', async () => {
    const messages = conversation();
    const [type, ours] = await new MessageCachingSerializer().dumpsTyped(messages);
    const [, stock] = await new JsonPlusSerializer().dumpsTyped(messages);
    expect(type).toBe('json');
    expect(text(ours)).toBe(text(stock));
    const back = (await new JsonPlusSerializer().loadsTyped('json', ours)) as BaseMessage[];
    expect(back.map((m) => [m.getType(), m.id, m.content])).toEqual(messages.map((m) => [m.getType(), m.id, m.content]));
  });

  it('serializes a message once however many checkpoints it appears in', async () => {
    const serde = new MessageCachingSerializer();
    const messages = conversation();
    const toJSON = jest.spyOn(messages[0], 'toJSON');
    await serde.dumpsTyped(messages);
    const longer = [...messages, new AIMessage({ content: 'done', id: 'a2' })];
    const [, bytes] = await serde.dumpsTyped(longer);
    expect(toJSON).toHaveBeenCalledTimes(1);
    expect(text(bytes)).toBe(text((await new JsonPlusSerializer().dumpsTyped(longer))[1]));
  });

  it('leaves values that are not message lists to the stock serializer', async () => {
    const serde = new MessageCachingSerializer();
    for (const value of [[], { files: { '/a': { content: ['x'] } } }, ['plain', 1], new Uint8Array([1, 2])]) {
      expect(await serde.dumpsTyped(value)).toEqual(await new JsonPlusSerializer().dumpsTyped(value));
    }
  });
});

describe('messages deltas', () => {
  it('reads a delta blob as the appended messages, the count kept and the base version', async () => {
    const serde = new MessageCachingSerializer();
    const [human, ai, tool] = conversation();
    const delta = await serde.loadsTyped(messagesDeltaType(1, '7.25'), serde.dumpsMessages([ai, tool]));
    expect(delta).toBeInstanceOf(MessagesDelta);
    expect(delta.kept).toBe(1);
    expect(delta.baseVersion).toBe('7.25');
    const rebuilt = (delta as MessagesDelta).applyTo([human, new AIMessage({ content: 'replaced', id: 'old' })]);
    expect(rebuilt.map((m) => m.id)).toEqual(['h1', 'a1', 't1']);
  });

  it('refuses to apply a delta to a shorter base than it was written against', async () => {
    const delta = new MessagesDelta(3, '1', []);
    expect(() => delta.applyTo([new HumanMessage('only one')])).toThrow(/keeps 3 messages of a base that has 1/);
  });
});
