import { jest } from '@jest/globals';
import { randomUUID } from 'node:crypto';
import { AIMessage } from '@langchain/core/messages';
import { Client } from '@langchain/langgraph-sdk';
import { ScriptedModelProvider, type ChatScript } from '@drydock/agents';
import {
  AGENT_THREADS_REPOSITORY,
  type AgentThreadRecord,
  type AgentThreadsRepository,
  type ClaimedThread,
} from '../../apps/gateway/src/langgraph/agent-threads.repository.js';
import type { ApiClient } from './support/api-client.js';
import { EchoAgentRuntime } from './support/echo-agent-runtime.js';
import { startPlatform, type Platform } from './support/platform.js';

interface WireMessage {
  type: string;
  content: unknown;
  id?: string;
  tool_calls?: unknown[];
}
interface StreamEvent {
  event: string;
  data: any;
}

// The SDK throws HTTPError(status, body text); the gateway's body names a stable code.
async function refusal(call: Promise<unknown> | AsyncIterable<unknown>): Promise<{ status: number; code: string }> {
  try {
    if (Symbol.asyncIterator in (call as object)) {
      for await (const _ of call as AsyncIterable<unknown>);
    } else {
      await call;
    }
  } catch (error) {
    const { status, text, message } = error as { status?: number; text?: string; message: string };
    // A run/wait that failed after its keep-alive had sent the 200 headers: the SDK raises
    // the body's {"__error__": {error, message}} as "<code>: <message>".
    if (text === undefined) return { status: 200, code: /^([A-Z_]+): /.exec(message)?.[1] ?? message };
    return { status: status!, code: JSON.parse(text).error.code };
  }
  throw new Error('expected the request to be refused');
}

// The LangGraph-compatible API driven by the official @langchain/langgraph-sdk Client,
// against a real gateway whose agent is a small real StateGraph (EchoAgentRuntime).
describe('LangGraph-compatible API', () => {
  let platform: Platform;
  let runtime: EchoAgentRuntime;
  let tenant: ApiClient & { tenantId: string };
  let other: ApiClient & { tenantId: string };
  let client: Client;

  const sdk = (key: string | null) => new Client({ apiUrl: platform.url, apiKey: key, callerOptions: { maxRetries: 0 } });
  const keyOf = (api: ApiClient) => (api as unknown as { key: string }).key;
  const say = (content: string) => ({ messages: [{ role: 'user', content }] });

  async function collect(stream: AsyncIterable<StreamEvent>): Promise<StreamEvent[]> {
    const events: StreamEvent[] = [];
    for await (const event of stream) events.push(event);
    return events;
  }

  async function waitForStatus(threadId: string, status: string) {
    for (let i = 0; i < 100; i++) {
      if ((await client.threads.get(threadId)).status === status) return;
      await new Promise((resolve) => setTimeout(resolve, 50));
    }
    throw new Error(`thread ${threadId} never became ${status}`);
  }

  beforeAll(async () => {
    runtime = new EchoAgentRuntime();
    platform = await startPlatform({}, { agentRuntime: runtime });
    tenant = await platform.newTenant();
    other = await platform.newTenant();
    client = sdk(keyOf(tenant));
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should list the built-in agent as an assistant', async () => {
    const assistants = await client.assistants.search({ limit: 10 });

    expect(assistants.map((a) => [a.assistant_id, a.graph_id])).toEqual([['agent', 'agent']]);
    expect(await client.assistants.get('agent')).toMatchObject({ assistant_id: 'agent', name: 'Echo agent', version: 1 });
    expect(await refusal(client.assistants.get('nope'))).toEqual({ status: 404, code: 'AGENT_NOT_FOUND' });
  });

  it('should stream a run in values, updates and messages modes', async () => {
    const thread = await client.threads.create({ metadata: { topic: 'greeting' } });

    const events = await collect(
      client.runs.stream(thread.thread_id, 'agent', { input: say('hello'), streamMode: ['values', 'updates', 'messages'] }),
    );

    expect(events[0]).toMatchObject({ event: 'metadata', data: { thread_id: thread.thread_id, run_id: expect.any(String) } });
    expect(events.at(-1)?.event).toBe('end');
    const values = events.filter((e) => e.event === 'values').at(-1)!.data;
    expect(values.messages.map((m: WireMessage) => [m.type, m.content])).toEqual([
      ['human', 'hello'],
      ['ai', 'echo: hello'],
    ]);
    const updates = events.filter((e) => e.event === 'updates').map((e) => e.data);
    expect(updates).toContainEqual({ agent: { messages: [expect.objectContaining({ type: 'ai', content: 'echo: hello', tool_calls: [] })] } });
    // The model streams token by token: partial messages grow, then the message completes.
    const aiId = values.messages[1].id;
    const partials = events.filter((e) => e.event === 'messages/partial').map((e) => e.data[0]);
    expect(partials.length).toBeGreaterThan(1);
    expect(partials.at(-1)).toMatchObject({ id: aiId, type: 'ai', content: 'echo: hello' });
    const metadata = events.find((e) => e.event === 'messages/metadata')!.data;
    expect(metadata[aiId].metadata).toMatchObject({ langgraph_node: 'agent', thread_id: thread.thread_id });
    const completed = events.filter((e) => e.event === 'messages/complete').flatMap((e) => e.data);
    expect(completed.map((m: WireMessage) => m.content)).toEqual(['hello', 'echo: hello']);
    // Nothing of Drydock's own config reaches the client.
    expect(JSON.stringify(events)).not.toContain(tenant.tenantId);
  });

  it('should stream messages-tuple mode as the graph\'s message chunks', async () => {
    const thread = await client.threads.create();

    const events = await collect(client.runs.stream(thread.thread_id, 'agent', { input: say('tuple'), streamMode: 'messages-tuple' }));

    const tuples = events.filter((e) => e.event === 'messages').map((e) => e.data);
    expect(tuples.length).toBeGreaterThan(1);
    expect(tuples.map(([chunk]) => chunk.content).join('')).toBe('echo: tuple');
    expect(tuples[0][1]).toMatchObject({ langgraph_node: 'agent', thread_id: thread.thread_id });
    expect(tuples[0][1]).not.toHaveProperty('drydock_tenant_id');
    expect(events.some((e) => e.event === 'values')).toBe(false);
  });

  it('should answer runs.wait with the final values and keep the conversation in the thread', async () => {
    const thread = await client.threads.create({ metadata: { topic: 'wait' } });
    await client.runs.wait(thread.thread_id, 'agent', { input: say('one') });

    const values = (await client.runs.wait(thread.thread_id, 'agent', { input: say('two') })) as { messages: WireMessage[] };

    expect(values.messages.map((m) => `${m.type}:${m.content}`)).toEqual(['human:one', 'ai:echo: one', 'human:two', 'ai:echo: two']);
    const state = await client.threads.getState<{ messages: WireMessage[] }>(thread.thread_id);
    expect(state.values.messages).toEqual(values.messages);
    expect(state.next).toEqual([]);
    expect(state.checkpoint).toMatchObject({ thread_id: thread.thread_id, checkpoint_ns: '', checkpoint_id: expect.any(String) });
    expect(state.parent_checkpoint?.thread_id).toBe(thread.thread_id);
    expect(Object.keys(state.metadata ?? {}).filter((k) => k.startsWith('drydock_'))).toEqual([]);
    const history = await client.threads.getHistory<{ messages: WireMessage[] }>(thread.thread_id, { limit: 3 });
    expect(history).toHaveLength(3);
    expect(history[0]!.checkpoint.checkpoint_id).toBe(state.checkpoint.checkpoint_id);
    expect(history.map((h) => h.values.messages.length)).toEqual([4, 3, 2]);
    const atCheckpoint = await client.threads.getState<{ messages: WireMessage[] }>(thread.thread_id, history[2]!.checkpoint.checkpoint_id!);
    expect(atCheckpoint.values.messages).toHaveLength(2);
    const listed = await client.threads.get(thread.thread_id);
    expect(listed).toMatchObject({ status: 'idle', metadata: { topic: 'wait', graph_id: 'agent', assistant_id: 'agent' } });
    expect((listed.values as { messages: unknown[] }).messages).toHaveLength(4);
  });

  it('should branch a run from an earlier checkpoint', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'agent', { input: say('one') });
    const [afterOne] = await client.threads.getHistory(thread.thread_id, { limit: 1 });
    await client.runs.wait(thread.thread_id, 'agent', { input: say('two') });

    const values = (await client.runs.wait(thread.thread_id, 'agent', {
      input: say('instead'),
      checkpointId: afterOne!.checkpoint.checkpoint_id!,
    })) as { messages: WireMessage[] };

    expect(values.messages.map((m) => m.content)).toEqual(['one', 'echo: one', 'instead', 'echo: instead']);
  });

  it('should report a failed run and mark the thread as in error until the next run', async () => {
    const thread = await client.threads.create();

    const waited = await refusal(client.runs.wait(thread.thread_id, 'agent', { input: say('fail') }));
    const streamed = await collect(client.runs.stream(thread.thread_id, 'agent', { input: say('fail') }));

    expect(waited).toEqual({ status: 502, code: 'RUN_FAILED' });
    expect(streamed.at(-1)).toEqual({ event: 'error', data: { error: 'RUN_FAILED', message: expect.stringContaining('scripted failure') } });
    expect(await client.threads.get(thread.thread_id)).toMatchObject({ status: 'error', error: { code: 'RUN_FAILED' } });
    await client.runs.wait(thread.thread_id, 'agent', { input: say('recover') });
    expect(await client.threads.get(thread.thread_id)).toMatchObject({ status: 'idle', error: null });
  });

  // The release's commit is what makes a run's checkpoint durable (docs/agent.md): a
  // run whose release fails does not answer its values as if they were kept.
  it('should answer 503 RUN_NOT_CONFIRMED when the database does not confirm the end of a run', async () => {
    const thread = await client.threads.create();
    const threads = platform.gateway.get<AgentThreadsRepository>(AGENT_THREADS_REPOSITORY);
    const release = jest.spyOn(threads, 'release').mockRejectedValueOnce(new Error('connection terminated'));
    try {
      expect(await refusal(client.runs.wait(thread.thread_id, 'agent', { input: say('unconfirmed') }))).toEqual({
        status: 503,
        code: 'RUN_NOT_CONFIRMED',
      });
    } finally {
      release.mockRestore();
    }
    // A run that failed anyway keeps its own error (on a thread of its own: the
    // unreleased one stays held until its run is stale).
    const another = await client.threads.create();
    const failing = jest.spyOn(threads, 'release').mockRejectedValueOnce(new Error('connection terminated'));
    try {
      expect(await refusal(client.runs.wait(another.thread_id, 'agent', { input: say('fail') }))).toEqual({ status: 502, code: 'RUN_FAILED' });
    } finally {
      failing.mockRestore();
    }
  });

  it('should update a thread\'s state and metadata, search and delete threads', async () => {
    const thread = await client.threads.create({ metadata: { project: 'p-1' } });

    await client.threads.updateState(thread.thread_id, { values: say('seeded'), asNode: 'agent' });
    const patched = await client.threads.update(thread.thread_id, { metadata: { stage: 'review' } });

    expect(patched.metadata).toEqual({ project: 'p-1', stage: 'review' });
    expect((await client.threads.getState<{ messages: WireMessage[] }>(thread.thread_id)).values.messages).toMatchObject([
      { type: 'human', content: 'seeded' },
    ]);
    const found = await client.threads.search({ metadata: { project: 'p-1' } });
    expect(found.map((t) => t.thread_id)).toEqual([thread.thread_id]);
    expect(await client.threads.count({ metadata: { project: 'p-1' } })).toBe(1);
    await client.threads.delete(thread.thread_id);
    expect(await refusal(client.threads.get(thread.thread_id))).toEqual({ status: 404, code: 'THREAD_NOT_FOUND' });
    const checkpoints = await runtime.checkpointer.getTuple(runtime.stateConfig(tenant.tenantId, thread.thread_id));
    expect(checkpoints).toBeUndefined();
  });

  it('should accept a client-chosen thread id once, or return it with if_exists do_nothing', async () => {
    const threadId = randomUUID();

    const created = await client.threads.create({ threadId });

    expect(created.thread_id).toBe(threadId);
    expect(await refusal(client.threads.create({ threadId }))).toEqual({ status: 409, code: 'THREAD_EXISTS' });
    expect((await client.threads.create({ threadId, ifExists: 'do_nothing' })).thread_id).toBe(threadId);
    // The same id is free for another tenant: thread ids are per tenant.
    expect((await sdk(keyOf(other)).threads.create({ threadId })).thread_id).toBe(threadId);
  });

  it('should hide a tenant\'s thread from every other tenant', async () => {
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'agent', { input: say('secret') });
    const intruder = sdk(keyOf(other));

    expect(await refusal(intruder.threads.get(thread.thread_id))).toEqual({ status: 404, code: 'THREAD_NOT_FOUND' });
    expect(await refusal(intruder.threads.getState(thread.thread_id))).toEqual({ status: 404, code: 'THREAD_NOT_FOUND' });
    expect(await refusal(intruder.threads.getHistory(thread.thread_id))).toEqual({ status: 404, code: 'THREAD_NOT_FOUND' });
    expect(await refusal(intruder.runs.wait(thread.thread_id, 'agent', { input: say('x') }))).toEqual({
      status: 404,
      code: 'THREAD_NOT_FOUND',
    });
    expect(await refusal(intruder.runs.stream(thread.thread_id, 'agent', { input: say('x') }))).toEqual({
      status: 404,
      code: 'THREAD_NOT_FOUND',
    });
    expect(await refusal(intruder.threads.delete(thread.thread_id))).toEqual({ status: 404, code: 'THREAD_NOT_FOUND' });
    expect((await intruder.threads.search({ ids: [thread.thread_id] })).length).toBe(0);
    expect((await client.threads.getState<{ messages: unknown[] }>(thread.thread_id)).values.messages).toHaveLength(2);
  });

  it('should require a tenant key, as x-api-key or a bearer token', async () => {
    expect(await refusal(sdk(null).threads.create())).toEqual({ status: 401, code: 'UNAUTHORIZED' });
    expect(await refusal(sdk('ddk_not-a-key').threads.create())).toEqual({ status: 401, code: 'INVALID_API_KEY' });
    // Authorization: Bearer, and no body at all (curl -X POST).
    const bearer = await tenant.request('POST', '/threads');
    expect(bearer.status).toBe(200);
    expect(bearer.body.thread_id).toEqual(expect.any(String));
  });

  it('should refuse malformed requests with a 400 and a stable code', async () => {
    const thread = await client.threads.create();
    const run = (body: Record<string, unknown>) => tenant.post(`/threads/${thread.thread_id}/runs/wait`, body);

    const cases: Array<[Promise<{ status: number; body: any }>, string]> = [
      [run({ assistant_id: 'agent', input: { messages: [{ role: 'alien', content: 'x' }] } }), 'INVALID_INPUT'],
      [run({ assistant_id: 'agent', input: { messages: [{ role: 'tool', content: 'x' }] } }), 'INVALID_INPUT'],
      [run({ assistant_id: 'agent', stream_mode: ['debug'] }), 'INVALID_STREAM_MODE'],
      [run({ input: say('no assistant') }), 'VALIDATION_FAILED'],
      [run({ assistant_id: 'agent', multitask_strategy: 'enqueue' }), 'UNSUPPORTED_OPTION'],
      [run({ assistant_id: 'agent', checkpoint_id: 'not-a-uuid' }), 'INVALID_CHECKPOINT_ID'],
      // A first run needs input: there is nothing to resume.
      [run({ assistant_id: 'agent' }), 'INVALID_INPUT'],
      [tenant.post('/threads/not-a-uuid/runs/wait', { assistant_id: 'agent' }), 'INVALID_THREAD_ID'],
      [tenant.post('/threads', { thread_id: 'chat-1' }), 'INVALID_THREAD_ID'],
      [tenant.post('/threads/search', { limit: 0 }), 'VALIDATION_FAILED'],
    ];

    for (const [response, code] of cases) {
      const { status, body } = await response;
      expect({ status, code: body.error?.code }).toEqual({ status: 400, code });
    }
    expect(await refusal(client.runs.wait(thread.thread_id, 'someone-else', { input: say('x') }))).toEqual({
      status: 404,
      code: 'AGENT_NOT_FOUND',
    });
    expect((await client.threads.get(thread.thread_id)).status).toBe('idle');
  });

  it('should refuse a second run on a thread while one is running', async () => {
    const thread = await client.threads.create();
    const waiting = runtime.nodeWaiting();
    const first = collect(client.runs.stream(thread.thread_id, 'agent', { input: say('hold'), streamMode: 'values' }));
    await waiting;

    expect(await refusal(client.runs.wait(thread.thread_id, 'agent', { input: say('too soon') }))).toEqual({
      status: 409,
      code: 'THREAD_BUSY',
    });
    expect((await client.threads.get(thread.thread_id)).status).toBe('busy');
    runtime.release();
    const events = await first;
    expect(events.at(-1)?.event).toBe('end');
    expect((await client.threads.get(thread.thread_id)).status).toBe('idle');
  });

  it('should cancel the run when the client disconnects from its stream', async () => {
    const thread = await client.threads.create();
    const abortedBefore = runtime.aborted;
    const controller = new AbortController();
    const waiting = runtime.nodeWaiting();
    const stream = collect(
      client.runs.stream(thread.thread_id, 'agent', { input: say('hang'), streamMode: 'values', signal: controller.signal }),
    ).catch(() => []);
    await waiting;

    controller.abort();
    await stream;

    await waitForStatus(thread.thread_id, 'idle');
    expect(runtime.aborted).toBe(abortedBefore + 1);
    // The thread takes the next run.
    const values = (await client.runs.wait(thread.thread_id, 'agent', { input: say('after') })) as { messages: WireMessage[] };
    expect(values.messages.at(-1)?.content).toBe('echo: after');
  });
});

// The same API over the real agent (graph, tools, PostgreSQL checkpointer, thread files),
// its model scripted.
describe('LangGraph-compatible API with the Drydock agent', () => {
  let platform: Platform;
  let tenant: ApiClient & { tenantId: string };

  // When set, the next model call waits at it (a run under way while its thread changes hands).
  let hold: { reached: () => void; released: Promise<void> } | null = null;

  beforeAll(async () => {
    const script: ChatScript = async (turn) => {
      const held = hold;
      hold = null;
      if (held) {
        held.reached();
        await held.released;
      }
      return turn.step === 0
        ? new AIMessage({
            content: 'Writing the note.',
            tool_calls: [{ id: 'call-1', name: 'write_file', args: { file_path: '/notes/todo.md', content: '- ship it\n' }, type: 'tool_call' }],
          })
        : new AIMessage('Done: /notes/todo.md');
    };
    platform = await startPlatform({}, { chatModels: new ScriptedModelProvider(() => script) });
    tenant = await platform.newTenant();
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should run a tool-calling conversation whose files are the thread\'s', async () => {
    const client = new Client({ apiUrl: platform.url, apiKey: (tenant as unknown as { key: string }).key, callerOptions: { maxRetries: 0 } });
    const thread = await client.threads.create();

    const events: StreamEvent[] = [];
    for await (const event of client.runs.stream(thread.thread_id, 'agent', {
      input: { messages: [{ role: 'user', content: 'Note: ship it' }] },
      streamMode: ['updates', 'messages-tuple'],
    })) {
      events.push(event);
    }

    expect(events.at(-1)?.event).toBe('end');
    const updated = events.filter((e) => e.event === 'updates').flatMap((e) => Object.values(e.data) as Array<{ messages?: WireMessage[] }>);
    const messages = updated.flatMap((u) => u?.messages ?? []);
    expect(messages.map((m) => m.type)).toEqual(['ai', 'tool', 'ai']);
    expect(messages[0]!.tool_calls).toMatchObject([{ id: 'call-1', name: 'write_file' }]);
    expect(messages[1]).toMatchObject({ type: 'tool', tool_call_id: 'call-1' });
    const state = await client.threads.getState<{ messages: WireMessage[] }>(thread.thread_id);
    expect(state.values.messages.at(-1)).toMatchObject({ type: 'ai', content: 'Done: /notes/todo.md' });
    expect(state.checkpoint.thread_id).toBe(thread.thread_id);
    expect(JSON.stringify([events, state, await client.threads.getHistory(thread.thread_id)])).not.toContain(tenant.tenantId);
    const file = await tenant.get(`/v1/threads/${thread.thread_id}/files/content?path=/notes/todo.md`);
    expect(file.body).toBe('- ship it\n');
  });
  // A run's last checkpoint is written by the statement that releases its thread
  // (CheckpointCarrier, docs/agent.md): when the release does not happen, neither does
  // the write, and the thread's state is the previous run's.
  it("should keep a run's last checkpoint only with its thread's release", async () => {
    const client = new Client({ apiUrl: platform.url, apiKey: (tenant as unknown as { key: string }).key, callerOptions: { maxRetries: 0 } });
    const threads = platform.gateway.get<AgentThreadsRepository>(AGENT_THREADS_REPOSITORY);
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'kept' }] } });
    const before = await client.threads.getState(thread.thread_id);

    const release = jest.spyOn(threads, 'release').mockRejectedValueOnce(new Error('connection terminated'));
    try {
      const run = client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'not kept' }] } });
      expect(await refusal(run)).toEqual({ status: 503, code: 'RUN_NOT_CONFIRMED' });
    } finally {
      release.mockRestore();
    }

    const after = await client.threads.getState<{ messages: WireMessage[] }>(thread.thread_id);
    expect(after.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    expect(after.values.messages.filter((m) => m.type === 'human').map((m) => m.content)).toEqual(['kept']);
  });

  // A run whose thread a newer run took over (its claim gone stale) writes nothing: the
  // thread's state is the newer run's, and the older one answers that it was not kept.
  it('should keep nothing of a run whose thread was taken over meanwhile', async () => {
    const client = new Client({ apiUrl: platform.url, apiKey: (tenant as unknown as { key: string }).key, callerOptions: { maxRetries: 0 } });
    const threads = platform.gateway.get<AgentThreadsRepository>(AGENT_THREADS_REPOSITORY);
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'kept' }] } });
    const before = await client.threads.getState(thread.thread_id);

    let release!: () => void;
    const reached = new Promise<void>((resolve) => (hold = { reached: resolve, released: new Promise<void>((r) => (release = r)) }));
    const run = refusal(client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'not kept' }] } }));
    let held: AgentThreadRecord | null;
    try {
      await reached;
      // Its claim goes stale (a gateway that stopped beating), and another run takes the
      // thread over and ends.
      held = await threads.find(tenant.tenantId, thread.thread_id);
      await new Promise((resolve) => setTimeout(resolve, 20));
      const takeover = await threads.claim(tenant.tenantId, thread.thread_id, randomUUID(), 1);
      expect(takeover).toMatchObject({ status: 'busy' });
      expect(await threads.release(tenant.tenantId, thread.thread_id, (takeover as ClaimedThread).runId!, null)).toBe(true);
      // The older run's next heartbeat (10 s) finds the thread no longer its own and
      // stops it, its model call still unanswered. By then runs/wait's keep-alive (also
      // 10 s) may have sent its 200 headers: the refusal is 503, or in the body.
      expect((await run).code).toBe('RUN_NOT_CONFIRMED');
    } finally {
      release();
      await run;
    }
    // The run that lost the thread released nothing either.
    expect(await threads.release(tenant.tenantId, thread.thread_id, held!.runId!, null)).toBe(false);
    const after = await client.threads.getState<{ messages: WireMessage[] }>(thread.thread_id);
    expect(after.checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    expect(after.values.messages.filter((m) => m.type === 'human').map((m) => m.content)).toEqual(['kept']);
    expect((await client.threads.get(thread.thread_id)).status).toBe('idle');
  });

  it('should write a state update only while it holds the thread', async () => {
    const client = new Client({ apiUrl: platform.url, apiKey: (tenant as unknown as { key: string }).key, callerOptions: { maxRetries: 0 } });
    const threads = platform.gateway.get<AgentThreadsRepository>(AGENT_THREADS_REPOSITORY);
    const thread = await client.threads.create();
    const seeded = { messages: [{ role: 'user', content: 'seeded' }] };
    await client.threads.updateState(thread.thread_id, { values: seeded, asNode: 'model' });
    const before = await client.threads.getState(thread.thread_id);

    // The hold gone by the time the checkpoint is written (as when the thread is deleted
    // meanwhile; here the condition names another hold): nothing is written, and the
    // update says the thread is gone.
    const heldByOf = threads.heldBy.bind(threads);
    const heldBy = jest.spyOn(threads, 'heldBy').mockImplementationOnce((tenantId, threadId) => heldByOf(tenantId, threadId, randomUUID()));
    try {
      expect(await refusal(client.threads.updateState(thread.thread_id, { values: seeded, asNode: 'model' }))).toEqual({
        status: 404,
        code: 'THREAD_NOT_FOUND',
      });
    } finally {
      heldBy.mockRestore();
    }
    expect((await client.threads.getState(thread.thread_id)).checkpoint.checkpoint_id).toBe(before.checkpoint.checkpoint_id);
    expect((await client.threads.get(thread.thread_id)).status).toBe('idle');
  });

  it('should read the latest checkpoint in the claim, and not when taking over from a stale run', async () => {
    const client = new Client({ apiUrl: platform.url, apiKey: (tenant as unknown as { key: string }).key, callerOptions: { maxRetries: 0 } });
    const threads = platform.gateway.get<AgentThreadsRepository>(AGENT_THREADS_REPOSITORY);
    const checkpointThread = (threadId: string) => `${tenant.tenantId}:${threadId}`;

    // A thread with no checkpoint yet: the claim says so.
    const fresh = await client.threads.create();
    const first = await threads.claim(tenant.tenantId, fresh.thread_id, randomUUID(), 60_000, checkpointThread(fresh.thread_id));
    expect(first).toMatchObject({ status: 'busy', latestCheckpoint: { threadId: checkpointThread(fresh.thread_id), checkpointId: null, pending: false } });

    // After a run, the checkpoint the thread's state shows.
    const thread = await client.threads.create();
    await client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'Note: ship it' }] } });
    const state = await client.threads.getState(thread.thread_id);
    const runId = randomUUID();
    const claimed = await threads.claim(tenant.tenantId, thread.thread_id, runId, 60_000, checkpointThread(thread.thread_id));
    expect(claimed).toMatchObject({ runId, latestCheckpoint: { checkpointId: state.checkpoint.checkpoint_id, pending: false } });

    // Held by a live run: busy. Held by a run whose heartbeat is older than the stale
    // limit: taken over, without a checkpoint read (that run may still be writing).
    expect(await threads.claim(tenant.tenantId, thread.thread_id, randomUUID(), 60_000, checkpointThread(thread.thread_id))).toBe('busy');
    await new Promise((resolve) => setTimeout(resolve, 20));
    const takeover = await threads.claim(tenant.tenantId, thread.thread_id, randomUUID(), 1, checkpointThread(thread.thread_id));
    expect(takeover).toMatchObject({ status: 'busy' });
    expect((takeover as ClaimedThread).latestCheckpoint).toBeUndefined();
    await threads.release(tenant.tenantId, thread.thread_id, (takeover as ClaimedThread).runId!, null);

    // Released: the next run starts from that checkpoint and carries the conversation on.
    const next = (await client.runs.wait(thread.thread_id, 'agent', { input: { messages: [{ role: 'user', content: 'again' }] } })) as {
      messages: WireMessage[];
    };
    expect(next.messages.map((m) => m.type)).toEqual(['human', 'ai', 'tool', 'ai', 'human', 'ai', 'tool', 'ai']);
  });
});
