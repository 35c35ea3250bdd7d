import { HumanMessage, type AIMessage } from '@langchain/core/messages';
import { tool } from '@langchain/core/tools';
import { jest } from '@jest/globals';
import { ChatOpenAICompletions, OpenAIClient } from '@langchain/openai';
import { createServer, type IncomingHttpHeaders, type Server, type ServerResponse } from 'node:http';
import type { AddressInfo } from 'node:net';
import { z } from 'zod';
import { CachingChatOpenAICompletions } from './caching-completions.model.js';
import { keepAliveFetch } from './keep-alive-fetch.js';

// A request that does not stream goes out without the OpenAI client: what the server
// receives, and what the caller gets back (answers, errors, retries, timeouts, aborts),
// must be what the stock client gives. Each case runs both and compares.

interface Received {
  method: string;
  url: string;
  headers: IncomingHttpHeaders;
  body: string;
}

type Answer = (res: ServerResponse) => void;

const completion = {
  id: 'chatcmpl-1',
  object: 'chat.completion',
  created: 1,
  model: 'local-model',
  system_fingerprint: 'fp_1',
  choices: [
    {
      index: 0,
      finish_reason: 'tool_calls',
      message: { role: 'assistant', content: 'Let me check.', tool_calls: [{ id: 'call_1', type: 'function', function: { name: 'weather', arguments: '{"city":"Oslo"}' } }] },
    },
  ],
  usage: { prompt_tokens: 12, completion_tokens: 7, total_tokens: 19 },
};

const json = (status: number, body: unknown, headers: Record<string, string> = {}): Answer => (res) =>
  res.writeHead(status, { 'content-type': 'application/json', ...headers }).end(JSON.stringify(body));

const weather = tool(async () => 'sunny', { name: 'weather', description: 'The weather in a city.', schema: z.object({ city: z.string() }) });

describe('direct chat completions', () => {
  let server: Server;
  let baseURL: string;
  let answer: Answer = json(200, completion);
  const received: Received[] = [];

  beforeAll(async () => {
    server = createServer((req, res) => {
      const chunks: Buffer[] = [];
      req.on('data', (chunk: Buffer) => chunks.push(chunk));
      req.on('end', () => {
        received.push({ method: req.method!, url: req.url!, headers: req.headers, body: Buffer.concat(chunks).toString() });
        answer(res);
      });
    });
    await new Promise<void>((resolve) => server.listen(0, '127.0.0.1', resolve));
    baseURL = `http://127.0.0.1:${(server.address() as AddressInfo).port}/v1`;
  });
  afterAll(() => new Promise<void>((resolve) => server.close(() => resolve())));
  beforeEach(() => {
    received.length = 0;
    answer = json(200, completion);
  });
  afterEach(() => jest.restoreAllMocks());

  const fields = (overrides: object = {}) => ({
    model: 'local-model',
    apiKey: 'sk-local',
    configuration: { baseURL, fetch: keepAliveFetch() },
    maxRetries: 0,
    timeout: 5_000,
    streamUsage: false,
    ...overrides,
  });
  const stock = (overrides?: object) => new ChatOpenAICompletions(fields(overrides));
  const direct = (overrides?: object) => new CachingChatOpenAICompletions(fields(overrides));

  // What the caller sees of a failure, and how many requests the server got.
  async function failure(model: ChatOpenAICompletions, options: { signal?: AbortSignal } = {}) {
    const before = received.length;
    const error = (await model.invoke([new HumanMessage('hi')], options).then(
      () => undefined,
      (e: unknown) => e,
    )) as (Error & { status?: number; lc_error_code?: string; cause?: unknown }) | undefined;
    expect(error).toBeDefined();
    return {
      class: error!.constructor.name,
      name: error!.name,
      message: error!.message,
      status: error!.status,
      code: error!.lc_error_code,
      requests: received.length - before,
    };
  }

  it('should send the client\'s URL, headers and bytes without the client, and read the answer as it does', async () => {
    answer = json(200, completion, { 'x-request-id': 'req_42' });
    const makeRequest = jest.spyOn(OpenAIClient.prototype as unknown as { makeRequest: () => unknown }, 'makeRequest');

    const expected = (await stock().bindTools([weather]).invoke([new HumanMessage('Weather in Oslo?')])) as AIMessage;
    const viaClient = makeRequest.mock.calls.length;
    const reply = (await direct().bindTools([weather]).invoke([new HumanMessage('Weather in Oslo?')])) as AIMessage;

    expect(viaClient).toBe(1);
    expect(makeRequest.mock.calls.length).toBe(1);
    const [fromClient, sent] = received;
    expect(sent).toEqual(fromClient);
    expect(sent!.headers.authorization).toBe('Bearer sk-local');
    expect(sent!.url).toBe('/v1/chat/completions');
    expect({ ...reply, lc_kwargs: undefined }).toEqual({ ...expected, lc_kwargs: undefined });
    expect(reply.tool_calls).toEqual([expect.objectContaining({ id: 'call_1', name: 'weather', args: { city: 'Oslo' } })]);
    expect(reply.usage_metadata).toMatchObject({ input_tokens: 12, output_tokens: 7, total_tokens: 19 });
  });

  it('should join the body for a fetch that does not take chunks', async () => {
    const given = keepAliveFetch();
    const bodies: unknown[] = [];
    // Any other fetch: the body it is handed is what it sends.
    const other: typeof fetch = (input, init) => {
      bodies.push(init?.body);
      return given(input, init);
    };

    await stock().invoke([new HumanMessage('hi')]);
    await direct({ configuration: { baseURL, fetch: other } }).invoke([new HumanMessage('hi')]);

    expect(bodies).toHaveLength(1);
    expect(bodies[0]).toBeInstanceOf(Uint8Array);
    const [fromClient, sent] = received;
    expect(sent!.body).toBe(fromClient!.body);
    expect(sent!.headers['content-length']).toBe(fromClient!.headers['content-length']);
  });

  it('should still stream, and send per-call options, through the client', async () => {
    const makeRequest = jest.spyOn(OpenAIClient.prototype as unknown as { makeRequest: () => unknown }, 'makeRequest');
    answer = (res) => {
      res.writeHead(200, { 'content-type': 'text/event-stream' });
      const chunk = { ...completion, object: 'chat.completion.chunk', choices: [{ index: 0, delta: { role: 'assistant', content: 'hello' }, finish_reason: 'stop' }] };
      res.end(`data: ${JSON.stringify(chunk)}\n\ndata: [DONE]\n\n`);
    };
    let streamed = '';
    for await (const chunk of await direct().stream([new HumanMessage('hi')])) streamed += String(chunk.content);
    answer = json(200, completion);
    await direct().invoke([new HumanMessage('hi')], { options: { headers: { 'x-extra': '1' } } } as object);

    expect(streamed).toBe('hello');
    expect(makeRequest).toHaveBeenCalledTimes(2);
    expect(received[1]!.headers['x-extra']).toBe('1');
  });

  it.each<[string, Answer]>([
    ['a 400 with an OpenAI error body', json(400, { error: { message: 'bad request: max_tokens', type: 'invalid_request_error', code: null } })],
    ['a 400 about tool calls', json(400, { error: { message: "messages with role 'tool' must follow tool_calls", type: 'invalid_request_error' } })],
    ['a 401', json(401, { error: { message: 'Incorrect API key provided', type: 'invalid_request_error', code: 'invalid_api_key' } })],
    ['a 429', json(429, { error: { message: 'Rate limit reached', type: 'requests' } }, { 'retry-after-ms': '1' })],
    ['a 404', json(404, { error: { message: 'The model does not exist', code: 'model_not_found' } })],
    ['a 413 with a text body', (res) => res.writeHead(413, { 'content-type': 'text/plain' }).end('request entity too large')],
    ['a 500 with no body', (res) => res.writeHead(500).end()],
    ['a 200 that is not JSON', (res) => res.writeHead(200, { 'content-type': 'text/html' }).end('<html>proxy login</html>')],
  ])('should fail on %s as the client does', async (_, reply) => {
    answer = reply;
    const expected = await failure(stock());
    expect(await failure(direct())).toEqual(expected);
  });

  it('should be retried by LangChain as the client is, on a server error', async () => {
    answer = json(503, { error: { message: 'The server is overloaded', type: 'server_error' } });
    const expected = await failure(stock({ maxRetries: 1 }));

    expect(expected.requests).toBe(2);
    expect(await failure(direct({ maxRetries: 1 }))).toEqual(expected);
  });

  it('should fail to connect, time out and be aborted as the client does', async () => {
    const closed = createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const port = (closed.address() as AddressInfo).port;
    await new Promise<void>((resolve) => closed.close(() => resolve()));
    const refused = { configuration: { baseURL: `http://127.0.0.1:${port}/v1`, fetch: keepAliveFetch() } };
    const connect = await failure(stock(refused));
    expect(await failure(direct(refused))).toEqual(connect);
    expect(connect.message).toBe('Connection error.');

    // A timeout is compared with what the client gives outside jest (run as a plain script,
    // it says "Request timed out."): in jest's module realm Node's DOMException is not the
    // realm's Error, so the client's own abort check misses it and calls the timeout a
    // connection error.
    // The timeout is long enough for the request to reach the server on a busy machine,
    // so it is counted within this call and not the next one.
    answer = () => undefined; // never answers
    expect(await failure(direct({ timeout: 1_000 }))).toEqual({
      class: 'Error',
      name: 'TimeoutError',
      message: 'Request timed out.',
      status: undefined,
      code: undefined,
      requests: 1,
    });

    // Aborted once the server has the request (not after a fixed delay, which on a busy
    // machine may come before the request is sent, or let it arrive during the next call).
    const aborted = async (model: ChatOpenAICompletions) => {
      const controller = new AbortController();
      answer = () => controller.abort();
      return failure(model, { signal: controller.signal });
    };
    const abort = await aborted(stock());
    expect(await aborted(direct())).toEqual(abort);

    const before = AbortSignal.abort();
    expect(await failure(direct(), { signal: before })).toEqual(await failure(stock(), { signal: before }));
  });
});
