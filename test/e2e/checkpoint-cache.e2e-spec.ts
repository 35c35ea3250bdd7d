import { randomUUID } from 'node:crypto';
import { jest } from '@jest/globals';
import { AIMessage, HumanMessage, type BaseMessage } from '@langchain/core/messages';
import { END, START, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import { AgentStateAnnotation, CachedPostgresSaver, type AgentState } from '@drydock/agents';
import { applyTestEnv } from './support/test-env.js';

const SCHEMA = 'langgraph';

// A one-node graph over the agent's own state: each run answers with the number of
// messages it saw, so a run that started from a stale checkpoint gives itself away.
function graphOn(checkpointer: PostgresSaver) {
  return new StateGraph(AgentStateAnnotation)
    .addNode('reply', (state: AgentState) => ({ messages: [new AIMessage(`seen ${state.messages.length}`)] }))
    .addEdge(START, 'reply')
    .addEdge('reply', END)
    .compile({ checkpointer });
}

const contents = (messages: BaseMessage[]) => messages.map((m) => `${m.getType()}:${String(m.content)}`);

// The checkpointer's in-process cache against real PostgreSQL, with two savers standing
// in for two gateways sharing one database.
describe('CachedPostgresSaver', () => {
  let pool: pg.Pool;
  let gatewayA: CachedPostgresSaver;
  let gatewayB: CachedPostgresSaver;
  let stock: PostgresSaver;

  beforeAll(async () => {
    applyTestEnv();
    pool = new pg.Pool({ connectionString: process.env.DATABASE_URL, max: 4 });
    stock = new PostgresSaver(pool, undefined, { schema: SCHEMA });
    await stock.setup();
    gatewayA = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 100 });
    gatewayB = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 100 });
  });
  afterAll(async () => {
    jest.restoreAllMocks();
    await pool.end();
  });

  const config = (threadId: string) => ({ configurable: { thread_id: threadId }, durability: 'exit' as const });
  const say = (text: string) => ({ messages: [new HumanMessage(text)] });

  it('serves the latest checkpoint from memory, as PostgreSQL holds it', async () => {
    const thread = `cache-${randomUUID()}`;
    const graph = graphOn(gatewayA);
    await graph.invoke(say('one'), config(thread));
    await graph.invoke(say('two'), config(thread));

    const fullLoads = jest.spyOn(PostgresSaver.prototype, 'getTuple');
    const cached = await gatewayA.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } });
    expect(fullLoads).toHaveBeenCalledTimes(0);
    fullLoads.mockRestore();

    const stored = await stock.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } });
    expect(cached!.config).toEqual(stored!.config);
    expect(cached!.parentConfig).toEqual(stored!.parentConfig);
    expect(cached!.metadata).toEqual(stored!.metadata);
    expect(cached!.pendingWrites).toEqual(stored!.pendingWrites);
    const { channel_values: cachedValues, ...cachedRest } = cached!.checkpoint;
    const { channel_values: storedValues, ...storedRest } = stored!.checkpoint;
    expect(cachedRest).toEqual(storedRest);
    expect(Object.keys(cachedValues).sort()).toEqual(Object.keys(storedValues).sort());
    expect(contents(cachedValues.messages as BaseMessage[])).toEqual(contents(storedValues.messages as BaseMessage[]));
    expect(contents(cachedValues.messages as BaseMessage[])).toEqual(['human:one', 'ai:seen 1', 'human:two', 'ai:seen 3']);
  });

  it('loads from PostgreSQL when another gateway has moved the thread on', async () => {
    const thread = `cache-${randomUUID()}`;
    const onA = graphOn(gatewayA);
    const onB = graphOn(gatewayB);
    await onA.invoke(say('one'), config(thread)); // A remembers this checkpoint
    await onB.invoke(say('two'), config(thread)); // B writes a newer one
    const state = await onA.invoke(say('three'), config(thread));
    expect(contents(state.messages)).toEqual(['human:one', 'ai:seen 1', 'human:two', 'ai:seen 3', 'human:three', 'ai:seen 5']);
  });

  it('does not answer from memory when writes are pending on the latest checkpoint', async () => {
    const thread = `cache-${randomUUID()}`;
    await graphOn(gatewayA).invoke(say('one'), config(thread));
    const latest = await gatewayA.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } });
    // Another gateway's interrupted step left a write on that checkpoint.
    await gatewayB.putWrites(latest!.config, [['messages', [new HumanMessage({ content: 'pending', id: 'p1' })]]], 'task-1');
    const tuple = await gatewayA.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } });
    expect(tuple!.pendingWrites).toHaveLength(1);
    expect(tuple!.pendingWrites![0][1]).toBe('messages');
  });

  it('forgets a thread another gateway deleted', async () => {
    const thread = `cache-${randomUUID()}`;
    await graphOn(gatewayA).invoke(say('one'), config(thread));
    await gatewayB.deleteThread(thread);
    expect(await gatewayA.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } })).toBeUndefined();
    const state = await graphOn(gatewayA).invoke(say('again'), config(thread));
    expect(contents(state.messages)).toEqual(['human:again', 'ai:seen 1']);
  });

  it('keeps at most maxThreads threads, and none when it is 0', async () => {
    const small = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 2 });
    const graph = graphOn(small);
    for (let i = 0; i < 4; i++) await graph.invoke(say('hi'), config(`cache-${randomUUID()}`));
    expect(small.cachedThreads).toBe(2);

    const off = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 0 });
    const thread = `cache-${randomUUID()}`;
    await graphOn(off).invoke(say('one'), config(thread));
    const state = await graphOn(off).invoke(say('two'), config(thread));
    expect(off.cachedThreads).toBe(0);
    expect(contents(state.messages)).toEqual(['human:one', 'ai:seen 1', 'human:two', 'ai:seen 3']);
  });

  it('writes checkpoints the stock saver reads, and reads the stock saver\'s', async () => {
    const thread = `cache-${randomUUID()}`;
    await graphOn(stock).invoke(say('stock'), config(thread));
    await graphOn(gatewayA).invoke(say('cached'), config(thread));
    const state = await graphOn(stock).invoke(say('stock again'), config(thread));
    expect(contents(state.messages)).toEqual(['human:stock', 'ai:seen 1', 'human:cached', 'ai:seen 3', 'human:stock again', 'ai:seen 5']);
    const history = [];
    for await (const tuple of gatewayA.list({ configurable: { thread_id: thread } })) history.push(tuple);
    expect(history).toHaveLength(3);
  });
});
