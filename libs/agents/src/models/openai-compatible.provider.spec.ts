import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { z } from 'zod';
import { makeConfig } from '../../../../test/factories/config.factory.js';
import { startOpenAiCompatibleServer, type OpenAiCompatibleServer } from '../../../../test/support/openai-compatible-server.js';
import { OpenAiCompatibleModelProvider } from './openai-compatible.provider.js';

const lookup = tool(async ({ city }) => `sunny in ${city}`, {
  name: 'weather',
  description: 'The weather in a city.',
  schema: z.object({ city: z.string().describe('City name') }),
});

describe(OpenAiCompatibleModelProvider.name, () => {
  let server: OpenAiCompatibleServer;

  beforeAll(async () => {
    server = await startOpenAiCompatibleServer((request) => {
      const last = request.messages.at(-1)!;
      if (last.role === 'tool') return { content: `It is ${String(last.content)}.` };
      return { content: 'Let me check.', toolCalls: [{ id: 'call_w1', name: 'weather', arguments: { city: 'Oslo' } }] };
    });
  });
  afterAll(() => server.close());

  it('should refuse to serve a model when nothing is configured', () => {
    const sut = new OpenAiCompatibleModelProvider(makeConfig().agent);
    expect(sut.configured).toBe(false);
    expect(() => sut.get('default')).toThrow(expect.objectContaining({ code: 'MODEL_NOT_CONFIGURED', status: 503 }));
  });

  it('should send tools and messages over the chat completions protocol and read tool calls back', async () => {
    const sut = new OpenAiCompatibleModelProvider(
      makeConfig({ AGENT_MODEL_BASE_URL: server.baseUrl, AGENT_MODEL_API_KEY: 'sk-local', AGENT_MODEL: 'local-model' }).agent,
    );
    const model = sut.get('default').bindTools!([lookup]);

    const reply = (await model.invoke([new HumanMessage('Weather in Oslo?')])) as AIMessage;

    expect(reply.tool_calls).toEqual([expect.objectContaining({ id: 'call_w1', name: 'weather', args: { city: 'Oslo' } })]);
    const request = server.requests.at(-1)!;
    expect(request.model).toBe('local-model');
    expect(request.tools?.[0]?.function).toMatchObject({
      name: 'weather',
      parameters: { properties: { city: { type: 'string', description: 'City name' } } },
    });
    expect(server.authorizations.at(-1)).toBe('Bearer sk-local');
  });

  it('should stream content and tool calls', async () => {
    const sut = new OpenAiCompatibleModelProvider(
      makeConfig({ AGENT_MODEL_BASE_URL: server.baseUrl, AGENT_MODEL: 'local-model' }).agent,
    );
    const chunks: string[] = [];
    let full: AIMessage | undefined;
    for await (const chunk of await sut.get('other-model').bindTools!([lookup]).stream([new HumanMessage('Weather?')])) {
      chunks.push(String(chunk.content));
      full = full ? (full as any).concat(chunk) : (chunk as AIMessage);
    }
    expect(chunks.join('')).toBe('Let me check.');
    expect(full!.tool_calls?.[0]).toMatchObject({ name: 'weather', args: { city: 'Oslo' } });
    expect(server.requests.at(-1)!).toMatchObject({ model: 'other-model', stream: true });
  });

  it('should give up on a model that does not answer within its timeout, and on one that is down', async () => {
    const silent = http.createServer(() => undefined);
    await new Promise<void>((resolve) => silent.listen(0, '127.0.0.1', resolve));
    const silentUrl = `http://127.0.0.1:${(silent.address() as AddressInfo).port}/v1`;
    try {
      const slow = new OpenAiCompatibleModelProvider(
        makeConfig({ AGENT_MODEL_BASE_URL: silentUrl, AGENT_MODEL: 'm', AGENT_MODEL_TIMEOUT_MS: '200' }).agent,
      ).get('default');
      // A timeout, after the provider's two retries and their backoff (3-7 s in all); a
      // request the timeout did not abort would hang past the test's limit.
      await expect(slow.invoke([new HumanMessage('hi')])).rejects.toThrow('Request timed out.');
    } finally {
      silent.closeAllConnections();
      await new Promise((resolve) => silent.close(resolve));
    }
    const down = new OpenAiCompatibleModelProvider(makeConfig({ AGENT_MODEL_BASE_URL: silentUrl, AGENT_MODEL: 'm' }).agent).get('default');
    await expect(down.invoke([new HumanMessage('hi')])).rejects.toThrow(/connection error/i);
  }, 30_000);
});
