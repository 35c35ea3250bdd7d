import {
  AIMessage,
  AIMessageChunk,
  HumanMessage,
  RemoveMessage,
  SystemMessage,
  ToolMessage,
  type BaseMessage,
} from '@langchain/core/messages';
import { InputMessageError, parseInputMessages, serializeMessage, toWire, wireJson } from './message-serializer.js';

describe(serializeMessage.name, () => {
  it('should write a human message as the SDK reads it', () => {
    const sut = serializeMessage(new HumanMessage({ content: 'hi', id: 'h1', name: 'ann' }));

    expect(sut).toEqual({ type: 'human', content: 'hi', id: 'h1', name: 'ann', additional_kwargs: {}, response_metadata: {} });
  });

  it('should write an AI message with its tool calls and usage', () => {
    const message = new AIMessage({
      content: 'calling',
      id: 'a1',
      tool_calls: [{ id: 'c1', name: 'ls', args: { path: '/' } }],
      usage_metadata: { input_tokens: 3, output_tokens: 2, total_tokens: 5 },
    });

    const sut = serializeMessage(message);

    expect(sut).toMatchObject({
      type: 'ai',
      id: 'a1',
      content: 'calling',
      tool_calls: [{ id: 'c1', name: 'ls', args: { path: '/' } }],
      invalid_tool_calls: [],
      usage_metadata: { total_tokens: 5 },
    });
    expect(sut).not.toHaveProperty('tool_call_chunks');
  });

  it('should write an AI message chunk as type "ai" with its tool call chunks', () => {
    const chunk = new AIMessageChunk({ content: 'he', id: 'x' }).concat(new AIMessageChunk({ content: 'llo', id: 'x' }));

    const sut = serializeMessage(chunk);

    expect(sut).toMatchObject({ type: 'ai', id: 'x', content: 'hello', tool_calls: [], tool_call_chunks: [] });
  });

  it('should write a tool message with its call id and status', () => {
    const sut = serializeMessage(new ToolMessage({ content: 'r', tool_call_id: 'c1', status: 'error', id: 't1' }));

    expect(sut).toMatchObject({ type: 'tool', tool_call_id: 'c1', status: 'error', content: 'r', id: 't1' });
  });

  it('should write system and remove messages by their type', () => {
    expect(serializeMessage(new SystemMessage('be brief')).type).toBe('system');
    expect(serializeMessage(new RemoveMessage({ id: 'gone' }))).toMatchObject({ type: 'remove', id: 'gone' });
  });

  it('should leave out an id the message does not have', () => {
    expect(serializeMessage(new HumanMessage('no id'))).not.toHaveProperty('id');
  });
});

describe(toWire.name, () => {
  it('should serialise messages anywhere in state values, updates and tuples', () => {
    const ai = new AIMessage({ content: 'ok', id: 'a' });

    const sut = toWire({ values: { messages: [new HumanMessage({ content: 'q', id: 'h' }), ai] }, update: { agent: { messages: [ai] } }, tuple: [ai, { step: 1 }] });

    expect(sut).toEqual({
      values: { messages: [expect.objectContaining({ type: 'human', id: 'h' }), expect.objectContaining({ type: 'ai', id: 'a' })] },
      update: { agent: { messages: [expect.objectContaining({ type: 'ai', content: 'ok' })] } },
      tuple: [expect.objectContaining({ type: 'ai' }), { step: 1 }],
    });
  });

  it('should turn dates into ISO strings and drop undefined and functions', () => {
    const sut = toWire({ at: new Date('2025-01-02T03:04:05Z'), gone: undefined, fn: () => 1, n: null });

    expect(sut).toEqual({ at: '2025-01-02T03:04:05.000Z', n: null });
  });

  it('should cut a reference cycle instead of looping', () => {
    const cyclic: Record<string, unknown> = { name: 'a' };
    cyclic.self = cyclic;

    expect(toWire(cyclic)).toEqual({ name: 'a', self: null });
  });

  it('should keep a value that appears twice (not a cycle)', () => {
    const shared = { k: 1 };

    expect(toWire({ a: shared, b: shared })).toEqual({ a: { k: 1 }, b: { k: 1 } });
  });
});

describe(wireJson.name, () => {
  class WithToJson {
    toJSON() {
      return { custom: true };
    }
  }

  it('should write exactly what JSON.stringify(toWire(value)) writes', () => {
    const cyclic: Record<string, unknown> = { name: 'a' };
    cyclic.self = cyclic;
    const shared = { k: 1 };
    const values = [
      {
        messages: [
          new HumanMessage({ content: 'q "quoted" \u2028', id: 'h' }),
          new AIMessage({ content: '', id: 'a', tool_calls: [{ id: 'c1', name: 'ls', args: { path: '/' } }] }),
          new ToolMessage({ content: [{ type: 'text', text: 'r' }], tool_call_id: 'c1', status: 'error', artifact: { isError: true } }),
        ],
        files: { '/a.txt': { content: ['x'], created_at: 'now' } },
        extracted: { c1: null },
      },
      { at: new Date('2025-01-02T03:04:05Z'), gone: undefined, fn: () => 1, n: null, big: 10n, list: [undefined, () => 1, 2] },
      { a: shared, b: shared, c: cyclic, d: new WithToJson(), e: new Map([['k', 1]]), f: { toJSON: () => undefined }, g: new (class { toJSON() { return undefined; } })() },
      [new AIMessageChunk({ content: 'he', id: 'x' }), { step: 1 }],
      'plain',
      null,
    ];

    for (const value of values) expect(wireJson(value).toString('utf8')).toBe(JSON.stringify(toWire(value)));
  });

  it('should write a thread that grows, or whose start changed, as JSON.stringify(toWire(state)) does', () => {
    const messages: BaseMessage[] = [new HumanMessage({ content: 'q', id: 'h' })];
    for (let step = 0; step < 5; step++) {
      messages.push(new AIMessage({ content: `answer ${step}`, id: `a${step}` }));
      const state = { messages: [...messages] };
      expect(wireJson(state).toString()).toBe(JSON.stringify(toWire(state)));
    }
    // The same last messages after another first one (a replaced message).
    const edited = { messages: [new HumanMessage({ content: 'other', id: 'h' }), ...messages.slice(1)] };
    expect(wireJson(edited).toString()).toBe(JSON.stringify(toWire(edited)));
    // A list of messages and other values.
    const mixed = { messages: [{ note: 1 }, ...messages] };
    expect(wireJson(mixed).toString()).toBe(JSON.stringify(toWire(mixed)));
  });

  it('should write a message the same way each time it is met', () => {
    const ai = new AIMessage({ content: 'ok', id: 'a' });

    const first = wireJson({ messages: [ai] }).toString();
    const second = wireJson({ messages: [new HumanMessage('q'), ai] }).toString();

    expect(JSON.parse(second).messages[1]).toEqual(JSON.parse(first).messages[0]);
  });
});

describe(parseInputMessages.name, () => {
  it('should accept role and type dicts as LangChain messages', () => {
    const sut = parseInputMessages([
      { role: 'user', content: 'hi' },
      { type: 'ai', content: '', tool_calls: [{ id: 'c', name: 'ls', args: {} }] },
      { role: 'tool', content: 'listing', tool_call_id: 'c' },
      { role: 'system', content: [{ type: 'text', text: 'rules' }] },
    ]);

    expect(sut.map((m) => m.getType())).toEqual(['human', 'ai', 'tool', 'system']);
    expect((sut[1] as AIMessage).tool_calls).toMatchObject([{ id: 'c', name: 'ls', args: {} }]);
  });

  it('should accept a single message and a plain string', () => {
    expect(parseInputMessages({ role: 'user', content: 'one' })).toHaveLength(1);
    expect(parseInputMessages('plain')[0]!.getType()).toBe('human');
  });

  it('should keep a client message id', () => {
    expect(parseInputMessages([{ role: 'user', content: 'x', id: 'mine' }])[0]!.id).toBe('mine');
  });

  it('should drop fields that are not a message\'s own', () => {
    const [sut] = parseInputMessages([{ role: 'user', content: 'x', lc: 1, kwargs: { evil: true }, __proto__x: 1 }]);

    expect(serializeMessage(sut!)).toEqual({ type: 'human', content: 'x', additional_kwargs: {}, response_metadata: {} });
  });

  it.each([
    [[{ role: 'alien', content: 'x' }], 'needs a "role" or "type"'],
    [[{ role: 'constructor', content: 'x' }], 'needs a "role" or "type"'],
    [[{ role: 'user' }], 'content must be a string'],
    [[{ role: 'user', content: 5 }], 'content must be a string'],
    [[{ role: 'user', content: [{ text: 'no type' }] }], 'content must be a string'],
    [[{ role: 'tool', content: 'x' }], 'tool_call_id'],
    [[{ role: 'ai', content: 'x', tool_calls: [{ name: 'ls' }] }], 'tool_calls must be'],
    [[{ type: 'remove' }], 'needs the "id"'],
    [[42], 'must be an object'],
  ])('should refuse %j with a sentence saying why', (input, reason) => {
    expect(() => parseInputMessages(input)).toThrow(InputMessageError);
    expect(() => parseInputMessages(input)).toThrow(reason);
  });

  it('should name the offending message', () => {
    expect(() => parseInputMessages([{ role: 'user', content: 'ok' }, { role: 'x', content: 'no' }])).toThrow('messages[1]');
  });
});
