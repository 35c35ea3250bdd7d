// The scripted model bench/agent drives a running gateway with: the OpenAI-compatible
// test server (test/support, compiled with the benches) with a stateless script. A
// conversation whose last message is not a tool result gets one `execute_python` tool
// call; one that ends with a tool result gets a short final answer. So every run of the
// agent is exactly one tool call.
import { startOpenAiCompatibleServer } from '../../test/support/openai-compatible-server.js';

export interface ScriptedModelServer {
  baseUrl: string;
  port: number;
  // Requests answered, how many of them streamed, and the time spent answering each (ms).
  stats: { requests: number; streamed: number; toolCalls: number; finals: number; handleMs: number[] };
  close(): Promise<void>;
}

export async function startScriptedModelServer(options: { port?: number; host?: string; code: string; answer?: string }): Promise<ScriptedModelServer> {
  const stats: ScriptedModelServer['stats'] = { requests: 0, streamed: 0, toolCalls: 0, finals: 0, handleMs: [] };
  let calls = 0;
  const server = await startOpenAiCompatibleServer(
    (request) => {
      const tools = (request.tools ?? []).map((t) => t.function.name);
      const final = request.messages.at(-1)?.role === 'tool';
      if (!final && !tools.includes('execute_python')) {
        throw new Error(`the agent offered no execute_python tool (tools: ${tools.join(', ') || 'none'})`);
      }
      stats.requests++;
      if (request.stream) stats.streamed++;
      if (final) {
        stats.finals++;
        return { content: options.answer ?? 'done' };
      }
      stats.toolCalls++;
      return { toolCalls: [{ id: `call_bench_${++calls}`, name: 'execute_python', arguments: { code: options.code } }] };
    },
    // Nothing kept per request: a run sends thousands, each with the whole conversation.
    { port: options.port, host: options.host, record: false },
  );
  stats.handleMs = server.handleMs;
  return { baseUrl: server.baseUrl, port: server.port, stats, close: () => server.close() };
}
