import { Client } from '@langchain/langgraph-sdk';
import { startOpenAiCompatibleServer, type OpenAiCompatibleServer } from '../support/openai-compatible-server.js';
import type { ApiClient } from './support/api-client.js';
import { startPlatform, type Platform } from './support/platform.js';

const keyOf = (client: ApiClient) => (client as unknown as { key: string }).key;

// The real wire path: the gateway's configured OpenAI-compatible client talks to a local
// server speaking the chat completions protocol, and the official SDK client streams
// the run from the gateway.
describe('Agent with an OpenAI-compatible model endpoint', () => {
  let server: OpenAiCompatibleServer;
  let platform: Platform;
  let tenant: ApiClient & { tenantId: string };

  beforeAll(async () => {
    server = await startOpenAiCompatibleServer((request) => {
      const last = request.messages.at(-1)!;
      if (last.role === 'tool') return { content: `The sandbox says ${String(last.content).match(/\d+/)?.[0]}.` };
      return { content: 'Computing it.', toolCalls: [{ id: 'call_sum', name: 'execute_python', arguments: { code: 'print(sum(range(10)))' } }] };
    });
    platform = await startPlatform({
      AGENT_MODEL_BASE_URL: server.baseUrl,
      AGENT_MODEL_API_KEY: 'sk-local-test',
      AGENT_MODEL: 'local-model',
    });
    tenant = await platform.newTenant();
  });

  afterAll(async () => {
    await platform?.close();
    await server?.close();
  });

  it('should stream a tool-calling run through the real client and keep the final state', async () => {
    const client = new Client({ apiUrl: platform.url, apiKey: keyOf(tenant), callerOptions: { maxRetries: 0 } });
    const thread = await client.threads.create();

    const events: Array<{ event: string; data: any }> = [];
    for await (const event of client.runs.stream(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'What is sum(range(10))?' }] },
      streamMode: ['values', 'updates', 'messages'],
    })) {
      events.push(event as { event: string; data: any });
    }

    expect(events[0]!.event).toBe('metadata');
    expect(events.at(-1)!.event).toBe('end');
    // The model's reply arrived in pieces before the run finished.
    const partial = events.filter((e) => e.event === 'messages/partial');
    expect(partial.length).toBeGreaterThan(1);
    expect(events.some((e) => e.event === 'updates' && e.data.tools)).toBe(true);
    const state = await client.threads.getState<{ messages: Array<{ type: string; content: unknown }> }>(thread.thread_id);
    expect(state.values.messages.map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai']);
    expect(String(state.values.messages[2]!.content)).toContain('45');
    expect(state.values.messages.at(-1)!.content).toBe('The sandbox says 45.');

    // What went over the wire: the configured model and key, the tools with their
    // schemas, the tool result sent back with its call id.
    expect(server.authorizations.every((a) => a === 'Bearer sk-local-test')).toBe(true);
    const first = server.requests[0]!;
    expect(first.model).toBe('local-model');
    expect(first.tools!.map((t) => t.function.name)).toEqual(expect.arrayContaining(['execute_python', 'read_file', 'file_write']));
    expect(server.requests.at(-1)!.messages.at(-1)).toMatchObject({ role: 'tool', tool_call_id: 'call_sum' });
  });
});

describe('Agent without a configured model', () => {
  let platform: Platform;
  let tenant: ApiClient & { tenantId: string };

  beforeAll(async () => {
    platform = await startPlatform();
    tenant = await platform.newTenant();
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should answer agent runs with 503 MODEL_NOT_CONFIGURED while everything else keeps working', async () => {
    const thread = await tenant.post('/threads', {});
    expect(thread.status).toBe(200);
    const run = await tenant.post(`/threads/${thread.body.thread_id}/runs/wait`, {
      assistant_id: 'agent',
      input: { messages: [{ role: 'user', content: 'hi' }] },
    });
    expect(run.status).toBe(503);
    expect(run.body.error.code).toBe('MODEL_NOT_CONFIGURED');
    expect(run.body.error.message).toMatch(/AGENT_MODEL_BASE_URL/);

    const session = await tenant.createSession({ threadId: 'no-model' });
    expect((await tenant.execute(session.id, '6 * 7')).body.result.text).toBe('42');
    expect((await tenant.post('/v1/agents', { name: 'later' })).status).toBe(201);
  });
});
