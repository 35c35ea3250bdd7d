import { AIMessage, AIMessageChunk, HumanMessage } from '@langchain/core/messages';
import { SerializedJson } from '../executions/sse-writer.js';
import { toWire, wireJson } from './message-serializer.js';
import { RunEventTranslator } from './run-events.js';

const publicThreadId = (key: string) => key.replace(/^ten_[^:]+:/, '');
const human = new HumanMessage({ content: 'hi', id: 'h1' });
const meta = { langgraph_node: 'agent', thread_id: 'ten_x:t-1', drydock_tenant_id: 'ten_x', __pregel_task_id: 'z' };

describe(RunEventTranslator.name, () => {
  it('should pass values and updates through with messages serialised', () => {
    const sut = new RunEventTranslator(['values', 'updates'], publicThreadId);

    const events = [
      ...sut.translate('values', { messages: [human] }),
      ...sut.translate('updates', { agent: { messages: [new AIMessage({ content: 'yo', id: 'a1' })] } }),
    ];

    // As the client reads them (`values` data is sent as ready-made JSON bytes).
    expect(JSON.parse(JSON.stringify(events))).toEqual([
      { event: 'values', data: { messages: [expect.objectContaining({ type: 'human', id: 'h1' })] } },
      { event: 'updates', data: { agent: { messages: [expect.objectContaining({ type: 'ai', content: 'yo' })] } } },
    ]);
  });

  it('should send each state as the bytes runs/wait answers for it', () => {
    const sut = new RunEventTranslator(['values'], publicThreadId);
    const state = { messages: [human, new AIMessage({ content: 'yo', id: 'a1' })] };

    const [event] = sut.translate('values', state);

    expect(event!.data).toBeInstanceOf(SerializedJson);
    expect((event!.data as SerializedJson).bytes.toString()).toBe(wireJson(state).toString());
    expect((event!.data as SerializedJson).bytes.toString()).toBe(JSON.stringify(toWire(state)));
  });

  it('should send only the modes asked for', () => {
    const sut = new RunEventTranslator(['updates'], publicThreadId);

    expect(sut.translate('values', { messages: [human] })).toEqual([]);
    expect(sut.translate('messages', [new AIMessageChunk({ content: 'a', id: 'a1' }), meta])).toEqual([]);
    expect(sut.lastValues).toEqual({ messages: [human] });
  });

  it('should build messages/partial from chunks, with messages/metadata once per message', () => {
    const sut = new RunEventTranslator(['messages'], publicThreadId);

    const events = [
      ...sut.translate('messages', [new AIMessageChunk({ content: 'ec', id: 'a1' }), meta]),
      ...sut.translate('messages', [new AIMessageChunk({ content: 'ho', id: 'a1' }), meta]),
    ];

    expect(events.map((e) => e.event)).toEqual(['messages/metadata', 'messages/partial', 'messages/partial']);
    expect(events[0]!.data).toEqual({ a1: { metadata: { langgraph_node: 'agent', thread_id: 't-1' } } });
    expect(events[2]!.data).toEqual([expect.objectContaining({ id: 'a1', type: 'ai', content: 'echo' })]);
  });

  it('should complete each message once, when it reaches the state', () => {
    const sut = new RunEventTranslator(['messages'], publicThreadId);
    const ai = new AIMessage({ content: 'echo', id: 'a1' });

    // As the client reads them (the data is sent as ready-made JSON bytes).
    const first = JSON.parse(JSON.stringify(sut.translate('values', { messages: [human] })));
    const second = JSON.parse(JSON.stringify(sut.translate('values', { messages: [human, ai] })));

    expect(first).toEqual([{ event: 'messages/complete', data: [expect.objectContaining({ id: 'h1' })] }]);
    expect(second).toEqual([{ event: 'messages/complete', data: [expect.objectContaining({ id: 'a1', content: 'echo' })] }]);
  });

  it('should send messages-tuple as [message, public metadata]', () => {
    const sut = new RunEventTranslator(['messages-tuple'], publicThreadId);

    const events = sut.translate('messages', [new AIMessageChunk({ content: 'x', id: 'a1' }), meta]);

    expect(events).toEqual([
      { event: 'messages', data: [expect.objectContaining({ type: 'ai', content: 'x' }), { langgraph_node: 'agent', thread_id: 't-1' }] },
    ]);
  });

  it('should ignore a messages chunk that holds no message', () => {
    const sut = new RunEventTranslator(['messages', 'messages-tuple'], publicThreadId);

    expect(sut.translate('messages', ['not a message', meta])).toEqual([]);
  });
});
