import { AIMessage, AIMessageChunk, HumanMessage, RemoveMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { jest } from '@jest/globals';

// The stock reducer, counted: the appending path must not need it.
const actual = await import('@langchain/langgraph');
const { messagesStateReducer } = actual;
let callsOfStockReducer = 0;
jest.unstable_mockModule('@langchain/langgraph', () => ({
  ...actual,
  messagesStateReducer: (...args: Parameters<typeof messagesStateReducer>) => {
    callsOfStockReducer++;
    return messagesStateReducer(...args);
  },
}));
const { appendMessages } = await import('./append-messages.js');

const plain = (messages: BaseMessage[]) => messages.map((m) => ({ type: m.getType(), id: m.id, content: m.content }));

describe('appendMessages', () => {
  it('appends new messages to the same result messagesStateReducer gives', () => {
    let ours: BaseMessage[] = [];
    let stock: BaseMessage[] = [];
    for (let turn = 0; turn < 5; turn++) {
      const update = [
        new HumanMessage({ content: `q${turn}`, id: `h${turn}` }),
        new AIMessage({ content: '', id: `a${turn}`, tool_calls: [{ id: `c${turn}`, name: 't', args: {} }] }),
        new ToolMessage({ content: 'r', tool_call_id: `c${turn}`, id: `t${turn}` }),
      ];
      ours = appendMessages(ours, update);
      stock = messagesStateReducer(stock, update);
    }
    expect(plain(ours)).toEqual(plain(stock));
    expect(ours).toHaveLength(15);
  });

  it('gives messages without an id a fresh one, as the stock reducer does', () => {
    const result = appendMessages([new HumanMessage({ content: 'a', id: 'h1' })], [new AIMessage('no id'), new AIMessage('nor this')]);
    expect(result).toHaveLength(3);
    expect(result[1].id).toMatch(/^[0-9a-f-]{36}$/);
    expect(result[1].id).not.toEqual(result[2].id);
    expect(result[1].lc_kwargs.id).toEqual(result[1].id);
  });

  it('replaces a message whose id is written again instead of appending it', () => {
    const left = appendMessages([], [new HumanMessage({ content: 'a', id: 'h1' }), new AIMessage({ content: 'draft', id: 'a1' })]);
    const result = appendMessages(left, [new AIMessage({ content: 'final', id: 'a1' })]);
    expect(plain(result)).toEqual([
      { type: 'human', id: 'h1', content: 'a' },
      { type: 'ai', id: 'a1', content: 'final' },
    ]);
    // The list it started from is unchanged.
    expect(left[1].content).toBe('draft');
  });

  it('hands anything but an append to the stock reducer', () => {
    const left = appendMessages([], [new HumanMessage({ content: 'a', id: 'h1' })]);
    const before = callsOfStockReducer;
    appendMessages(left, [new HumanMessage({ content: 'b', id: 'h1' })]);
    expect(callsOfStockReducer).toBe(before + 1);
  });

  it('removes messages with RemoveMessage, and refuses to remove an unknown id like the stock reducer', () => {
    const left = appendMessages([], [new HumanMessage({ content: 'a', id: 'h1' }), new AIMessage({ content: 'b', id: 'a1' })]);
    expect(plain(appendMessages(left, [new RemoveMessage({ id: 'h1' })]))).toEqual([{ type: 'ai', id: 'a1', content: 'b' }]);
    expect(() => appendMessages(left, [new RemoveMessage({ id: 'nope' })])).toThrow(/doesn't exist/);
  });

  it('handles the same new id twice in one update as the stock reducer does (the later wins)', () => {
    const update = [new AIMessage({ content: 'one', id: 'x' }), new AIMessage({ content: 'two', id: 'x' })];
    expect(plain(appendMessages([], update))).toEqual(plain(messagesStateReducer([], update)));
    expect(appendMessages([], update)).toHaveLength(1);
  });

  it('appends to an older list as if the newer ones did not exist', () => {
    const base = appendMessages([], [new HumanMessage({ content: 'a', id: 'h1' })]);
    // LangGraph applies a write to a scratch copy of the channels first, then for real:
    // the same message appended twice to the same list is an append both times.
    const scratch = appendMessages(base, [new AIMessage({ content: 'reply', id: 'a1' })]);
    const real = appendMessages(base, [new AIMessage({ content: 'reply', id: 'a1' })]);
    expect(plain(real)).toEqual(plain(scratch));
    expect(plain(real)).toEqual([{ type: 'human', id: 'h1', content: 'a' }, { type: 'ai', id: 'a1', content: 'reply' }]);
    // And an id in the newer list is replaced, not duplicated.
    expect(appendMessages(real, [new AIMessage({ content: 'again', id: 'a1' })])).toHaveLength(2);
  });

  it('takes the appending path for appends (the stock reducer is not called)', () => {
    let list = appendMessages([], [new HumanMessage({ content: 'a', id: 'h0' })]);
    const before = callsOfStockReducer;
    for (let i = 1; i < 5; i++) {
      appendMessages(list, [new AIMessage({ content: 'scratch', id: `a${i}` })]);
      list = appendMessages(list, [new AIMessage({ content: 'real', id: `a${i}` })]);
    }
    expect(callsOfStockReducer).toBe(before);
    expect(list).toHaveLength(5);
  });

  it('still knows every id after a hundred appends (past any internal flattening)', () => {
    let list = appendMessages([], [new HumanMessage({ content: 'first', id: 'm0' })]);
    for (let i = 1; i < 100; i++) list = appendMessages(list, [new AIMessage({ content: `m${i}`, id: `m${i}` })]);
    const before = callsOfStockReducer;
    for (const id of ['m0', 'm31', 'm32', 'm64', 'm99']) {
      const replaced = appendMessages(list, [new AIMessage({ content: 'new', id })]);
      expect(replaced).toHaveLength(100);
      expect(replaced.find((m) => m.id === id)!.content).toBe('new');
    }
    expect(callsOfStockReducer).toBe(before + 5);
  });

  it('turns a streamed chunk and a message-like object into whole messages', () => {
    const result = appendMessages([], [new AIMessageChunk({ content: 'streamed', id: 'c1' }), { role: 'user', content: 'hi', id: 'u1' } as never]);
    expect(result[0]).toBeInstanceOf(AIMessage);
    expect(AIMessageChunk.isInstance(result[0])).toBe(false);
    expect(result[1]).toBeInstanceOf(HumanMessage);
    expect(plain(result)).toEqual(plain(messagesStateReducer([], [new AIMessageChunk({ content: 'streamed', id: 'c1' }), { role: 'user', content: 'hi', id: 'u1' } as never])));
  });

  it('accepts a single message as well as a list', () => {
    expect(plain(appendMessages([], new HumanMessage({ content: 'solo', id: 's' })))).toEqual([{ type: 'human', id: 's', content: 'solo' }]);
  });
});
