import { AIMessage, AIMessageChunk, HumanMessage, RemoveMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { messagesStateReducer } from '@langchain/langgraph';
import { appendMessages } from './append-messages.js';

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

  it('still sees an id as taken after the list it came from was extended twice', () => {
    const base = appendMessages([], [new HumanMessage({ content: 'a', id: 'h1' })]);
    const branchA = appendMessages(base, [new AIMessage({ content: 'from a', id: 'a1' })]);
    // A second append to the older list: its id set already holds a1 (a superset), so
    // writing a1 there goes the full reducer's way and appends it correctly.
    const branchB = appendMessages(base, [new AIMessage({ content: 'from b', id: 'a1' })]);
    expect(plain(branchA)).toEqual([{ type: 'human', id: 'h1', content: 'a' }, { type: 'ai', id: 'a1', content: 'from a' }]);
    expect(plain(branchB)).toEqual([{ type: 'human', id: 'h1', content: 'a' }, { type: 'ai', id: 'a1', content: 'from b' }]);
    // And an id in the newer list is replaced, not duplicated.
    expect(appendMessages(branchA, [new AIMessage({ content: 'again', id: 'a1' })])).toHaveLength(2);
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
