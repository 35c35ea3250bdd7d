import { AIMessage, HumanMessage, SystemMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { ChatOpenAICompletions } from '@langchain/openai';
import { z } from 'zod';
import { startOpenAiCompatibleServer, type OpenAiCompatibleServer } from '../../../../test/support/openai-compatible-server.js';
import { CachingChatOpenAICompletions } from './caching-completions.model.js';

const lookup = tool(async ({ city }) => `sunny in ${city}`, {
  name: 'weather',
  description: 'The weather in a city.',
  schema: z.object({ city: z.string().describe('City name') }),
});

describe(CachingChatOpenAICompletions.name, () => {
  let server: OpenAiCompatibleServer;
  const bodies: string[] = [];
  // The bytes each request carried.
  const recordingFetch: typeof fetch = async (input, init) => {
    bodies.push(String(init?.body));
    return fetch(input, init);
  };

  beforeAll(async () => {
    server = await startOpenAiCompatibleServer((request) => {
      if (request.messages.at(-1)!.role === 'tool') return { content: 'It is sunny.' };
      return { content: 'Let me check.', toolCalls: [{ id: 'call_w1', name: 'weather', arguments: { city: 'Oslo' } }] };
    });
  });
  afterAll(() => server.close());
  beforeEach(() => (bodies.length = 0));

  const make = <M extends ChatOpenAICompletions>(Model: new (fields: object) => M) =>
    new Model({
      model: 'local-model',
      apiKey: 'sk-local',
      configuration: { baseURL: server.baseUrl, fetch: recordingFetch },
      maxRetries: 0,
      streamUsage: false,
    }).bindTools([lookup]);

  // A conversation that grows by the same message objects, as the agent's state does.
  const conversation = (): BaseMessage[][] => {
    const first = [new SystemMessage('be brief'), new HumanMessage({ content: 'Weather in "Oslo"? \u2028 ✓', id: 'h1' })];
    const second = [
      ...first,
      new AIMessage({ content: 'Let me check.', id: 'a1', tool_calls: [{ id: 'call_w1', name: 'weather', args: { city: 'Oslo' } }] }),
      new ToolMessage({ content: [{ type: 'text', text: 'sunny' }], tool_call_id: 'call_w1', status: 'success' }),
    ];
    return [first, second, [...second, new HumanMessage('and tomorrow?')]];
  };

  it('should send the very bytes the stock client sends, call after call', async () => {
    const stock = make(ChatOpenAICompletions);
    for (const messages of conversation()) await stock.invoke(messages);
    const expected = bodies.splice(0);

    const sut = make(CachingChatOpenAICompletions);
    for (const messages of conversation()) await sut.invoke(messages);

    expect(bodies).toEqual(expected);
    expect(JSON.parse(bodies[2]!).messages).toHaveLength(5);
  });

  it('should send a conversation whose earlier messages changed in full, not from the last request', async () => {
    const [, second] = conversation();
    // The same trailing message objects after another question: no earlier list is its start.
    const edited = [second![0]!, new HumanMessage({ content: 'Weather in Bergen?', id: 'h2' }), ...second!.slice(2), new HumanMessage('thanks')];
    const stock = make(ChatOpenAICompletions);
    for (const messages of [second!, edited]) await stock.invoke(messages);
    const expected = bodies.splice(0);

    const sut = make(CachingChatOpenAICompletions);
    for (const messages of [second!, edited]) await sut.invoke(messages);

    expect(bodies).toEqual(expected);
    expect(JSON.parse(bodies[1]!).messages[1].content).toBe('Weather in Bergen?');
  });

  it('should read tool calls back and stream as the stock client does', async () => {
    const sut = make(CachingChatOpenAICompletions);
    const [first] = conversation();

    const reply = (await sut.invoke(first!)) as AIMessage;
    let streamed = '';
    for await (const chunk of await sut.stream(first!)) streamed += String(chunk.content);

    expect(reply.tool_calls).toEqual([expect.objectContaining({ id: 'call_w1', name: 'weather', args: { city: 'Oslo' } })]);
    expect(streamed).toBe('Let me check.');
    expect(JSON.parse(bodies[1]!)).toMatchObject({ stream: true, messages: JSON.parse(bodies[0]!).messages });
  });
});
