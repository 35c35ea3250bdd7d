// A scripted OpenAI-compatible chat completions server (node:http) for benches that
// drive the agent of a running deployment: the gateway is started with
// AGENT_MODEL_BASE_URL pointing here. Stateless: a conversation whose last message is
// not a tool result gets one `execute_python` tool call; one that ends with a tool
// result gets a short final answer. So every run of the agent is exactly one tool call.
// Answers plain JSON, or server-sent events when the request says `stream: true` (the
// gateway's ChatOpenAICompletions streams when a run streams tokens).
import { createServer, type IncomingMessage, type Server } from 'node:http';
import type { AddressInfo } from 'node:net';

export interface ScriptedModelServer {
  baseUrl: string;
  port: number;
  // Requests answered, how many of them streamed, and the time spent answering each (ms).
  stats: { requests: number; streamed: number; toolCalls: number; finals: number; handleMs: number[] };
  close(): Promise<void>;
}

interface ChatRequest {
  model?: string;
  stream?: boolean;
  messages?: Array<{ role?: string; content?: unknown }>;
  tools?: Array<{ function?: { name?: string } }>;
}

export async function startScriptedModelServer(options: { port?: number; host?: string; code: string; answer?: string }): Promise<ScriptedModelServer> {
  const stats: ScriptedModelServer['stats'] = { requests: 0, streamed: 0, toolCalls: 0, finals: 0, handleMs: [] };
  let counter = 0;
  const server: Server = createServer((req, res) => {
    const started = performance.now();
    const path = (req.url ?? '').split('?')[0]!;
    if (req.method === 'GET' && path.endsWith('/models')) {
      res.writeHead(200, { 'content-type': 'application/json' }).end(JSON.stringify({ object: 'list', data: [{ id: 'bench-scripted', object: 'model' }] }));
      return;
    }
    if (req.method !== 'POST' || !path.endsWith('/chat/completions')) {
      res.writeHead(404, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: `no route ${req.method} ${path}` } }));
      return;
    }
    void readBody(req).then((text) => {
      let request: ChatRequest;
      try {
        request = JSON.parse(text) as ChatRequest;
      } catch {
        res.writeHead(400, { 'content-type': 'application/json' }).end(JSON.stringify({ error: { message: 'the body is not JSON' } }));
        return;
      }
      const tools = (request.tools ?? []).map((t) => t.function?.name);
      const last = request.messages?.at(-1);
      const final = last?.role === 'tool';
      if (!final && !tools.includes('execute_python')) {
        res
          .writeHead(400, { 'content-type': 'application/json' })
          .end(JSON.stringify({ error: { message: `the agent offered no execute_python tool (tools: ${tools.join(', ') || 'none'})` } }));
        return;
      }
      stats.requests++;
      const id = `chatcmpl-bench-${++counter}`;
      const created = Math.floor(Date.now() / 1000);
      const model = request.model ?? 'bench-scripted';
      const call = { id: `call_bench_${counter}`, type: 'function', function: { name: 'execute_python', arguments: JSON.stringify({ code: options.code }) } };
      const content = final ? (options.answer ?? 'done') : null;
      const finish = final ? 'stop' : 'tool_calls';
      if (final) stats.finals++;
      else stats.toolCalls++;
      const usage = { prompt_tokens: 10, completion_tokens: 5, total_tokens: 15 };
      if (!request.stream) {
        res.writeHead(200, { 'content-type': 'application/json' });
        res.end(
          JSON.stringify({
            id,
            object: 'chat.completion',
            created,
            model,
            choices: [{ index: 0, message: { role: 'assistant', content, ...(final ? {} : { tool_calls: [call] }) }, finish_reason: finish }],
            usage,
          }),
        );
      } else {
        stats.streamed++;
        res.writeHead(200, { 'content-type': 'text/event-stream', 'cache-control': 'no-cache' });
        const chunk = (delta: Record<string, unknown>, finishReason: string | null = null) =>
          res.write(`data: ${JSON.stringify({ id, object: 'chat.completion.chunk', created, model, choices: [{ index: 0, delta, finish_reason: finishReason }] })}\n\n`);
        chunk({ role: 'assistant', content: '' });
        if (final) chunk({ content });
        else chunk({ tool_calls: [{ index: 0, ...call }] });
        chunk({}, finish);
        res.end('data: [DONE]\n\n');
      }
      stats.handleMs.push(performance.now() - started);
    });
  });
  await new Promise<void>((resolve, reject) => {
    server.once('error', reject);
    server.listen(options.port ?? 0, options.host ?? '127.0.0.1', () => resolve());
  });
  // Keep-alive sockets of the gateway's client must not hold close() up.
  server.keepAliveTimeout = 5_000;
  const { port } = server.address() as AddressInfo;
  return {
    baseUrl: `http://${options.host ?? '127.0.0.1'}:${port}/v1`,
    port,
    stats,
    close: () =>
      new Promise((resolve) => {
        server.close(() => resolve());
        server.closeAllConnections();
      }),
  };
}

async function readBody(req: IncomingMessage): Promise<string> {
  const chunks: Buffer[] = [];
  for await (const chunk of req) chunks.push(chunk as Buffer);
  return Buffer.concat(chunks).toString('utf8');
}
