import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

// A small server speaking OpenAI's chat completions protocol (POST /v1/chat/completions,
// plain JSON or `stream: true` server-sent events), answering from a script. Tests point
// the real OpenAI client at it, so the wire path (request building, tool-call parsing,
// streaming) is exercised without a live model; bench/agent points a running gateway at
// it (this folder is compiled with the benches for that).

export interface WireToolCall {
  id: string;
  name: string;
  arguments: Record<string, unknown>;
}

export interface WireReply {
  content?: string;
  toolCalls?: WireToolCall[];
}

export interface ChatCompletionsRequest {
  model: string;
  messages: Array<{ role: string; content: unknown; tool_calls?: unknown[]; tool_call_id?: string }>;
  tools?: Array<{ type: 'function'; function: { name: string; description?: string; parameters?: unknown } }>;
  stream?: boolean;
}

export interface OpenAiCompatibleServer {
  baseUrl: string;
  requests: ChatCompletionsRequest[];
  // Authorization headers received, in order.
  authorizations: string[];
  // The time each request took to answer (ms), in order.
  handleMs: number[];
  port: number;
  close(): Promise<void>;
}

export async function startOpenAiCompatibleServer(
  script: (request: ChatCompletionsRequest) => WireReply,
  // `record: false` keeps no request or authorization (bench/agent: thousands of
  // requests, each with the whole conversation, would grow its heap by hundreds of MB).
  options: { port?: number; host?: string; record?: boolean } = {},
): Promise<OpenAiCompatibleServer> {
  const requests: ChatCompletionsRequest[] = [];
  const authorizations: string[] = [];
  const handleMs: number[] = [];
  let counter = 0;
  const server: Server = createServer(async (req, res) => {
    const started = performance.now();
    if (req.method !== 'POST' || !req.url?.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'not found' } }));
      return;
    }
    const request = JSON.parse(await body(req)) as ChatCompletionsRequest;
    if (options.record !== false) {
      requests.push(request);
      authorizations.push(req.headers.authorization ?? '');
    }
    let reply: WireReply;
    try {
      reply = script(request);
    } catch (error) {
      res.writeHead(500, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: (error as Error).message } }));
      return;
    }
    const id = `chatcmpl-${++counter}`;
    const created = Math.floor(Date.now() / 1000);
    const toolCalls = (reply.toolCalls ?? []).map((call, index) => ({
      index,
      id: call.id,
      type: 'function',
      function: { name: call.name, arguments: JSON.stringify(call.arguments) },
    }));
    const finish = toolCalls.length ? 'tool_calls' : 'stop';
    const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
    if (!request.stream) {
      res.writeHead(200, { 'content-type': 'application/json' });
      res.end(
        JSON.stringify({
          id,
          object: 'chat.completion',
          created,
          model: request.model,
          choices: [
            {
              index: 0,
              message: { role: 'assistant', content: reply.content ?? null, ...(toolCalls.length ? { tool_calls: toolCalls.map(({ index: _, ...c }) => c) } : {}) },
              finish_reason: finish,
            },
          ],
          usage,
        }),
      );
      handleMs.push(performance.now() - started);
      return;
    }
    res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
    const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
      res.write(
        `data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model: request.model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`,
      );
    chunk({ role: 'assistant', content: '' });
    // Content in a few pieces, so a client sees partial messages.
    const content = reply.content ?? '';
    for (let i = 0; i < content.length; i += 16) chunk({ content: content.slice(i, i + 16) });
    for (const call of toolCalls) chunk({ tool_calls: [call] });
    chunk({}, finish);
    res.write('data: [DONE]\n\n');
    res.end();
    handleMs.push(performance.now() - started);
  });
  const host = options.host ?? '127.0.0.1';
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, host, resolve);
  });
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://${host}:${port}/v1`,
    requests,
    authorizations,
    handleMs,
    port,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        // A client's keep-alive sockets must not hold close() up.
        server.closeAllConnections();
      }),
  };
}

async function body(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
