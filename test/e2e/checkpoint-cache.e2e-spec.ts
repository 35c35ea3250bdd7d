import { randomUUID } from 'node:crypto';
import { jest } from '@jest/globals';
import { AIMessage, HumanMessage, RemoveMessage, type BaseMessage } from '@langchain/core/messages';
import { Annotation, END, START, StateGraph } from '@langchain/langgraph';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import pg from 'pg';
import {
  AgentStateAnnotation,
  CachedPostgresSaver,
  CheckpointCarrier,
  CONFIG_CHECKPOINT_CARRIER,
  CONFIG_LATEST_CHECKPOINT,
  type AgentState,
  type CarriedWrite,
  type LatestCheckpoint,
} from '@drydock/agents';
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
  // A thread's message-list blob types, oldest version first.
  const blobTypesOf = async (thread: string) =>
    (
      await pool.query<{ type: string }>(
        `SELECT type FROM ${SCHEMA}.checkpoint_blobs WHERE thread_id = $1 AND channel = 'messages' ORDER BY version`,
        [thread],
      )
    ).rows.map((row) => row.type);

  it('serves the latest checkpoint from memory, as PostgreSQL holds it', async () => {
    const thread = `cache-${randomUUID()}`;
    const graph = graphOn(gatewayA);
    await graph.invoke(say('one'), config(thread));
    await graph.invoke(say('two'), config(thread));

    const fullLoads = jest.spyOn(PostgresSaver.prototype, 'getTuple');
    const cached = await gatewayA.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } });
    expect(fullLoads).toHaveBeenCalledTimes(0);
    fullLoads.mockRestore();

    // What a gateway with nothing in memory loads from PostgreSQL.
    const uncached = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 0 });
    const stored = await uncached.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } });
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

  describe('the latest checkpoint handed over by the run (the thread claim read it)', () => {
    const latestQueries = () => {
      const query = jest.spyOn(pool, 'query');
      return () => query.mock.calls.filter(([q]) => (q as { name?: string })?.name === `${SCHEMA}.checkpoints.latest`).length;
    };
    const handed = (thread: string, latest: Omit<LatestCheckpoint, 'threadId'>, threadId = thread) => ({
      configurable: { thread_id: thread, checkpoint_ns: '', [CONFIG_LATEST_CHECKPOINT]: { threadId, ...latest } },
    });
    afterEach(() => jest.restoreAllMocks());

    it('answers from memory without a query when it names the remembered checkpoint', async () => {
      const thread = `cache-${randomUUID()}`;
      await graphOn(gatewayA).invoke(say('one'), config(thread));
      const remembered = (await gatewayA.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } }))!;
      const queries = latestQueries();
      const fullLoads = jest.spyOn(PostgresSaver.prototype, 'getTuple');
      const tuple = await gatewayA.getTuple(handed(thread, { checkpointId: remembered.config.configurable!.checkpoint_id, pending: false }));
      expect(queries()).toBe(0);
      expect(fullLoads).not.toHaveBeenCalled();
      expect(contents(tuple!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(['human:one', 'ai:seen 1']);
    });

    it('loads from PostgreSQL when it names another checkpoint, or writes pending, or none', async () => {
      const thread = `cache-${randomUUID()}`;
      await graphOn(gatewayA).invoke(say('one'), config(thread)); // A remembers this checkpoint
      await graphOn(gatewayB).invoke(say('two'), config(thread)); // B writes a newer one
      const newer = (await gatewayB.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } }))!;
      const newerId = newer.config.configurable!.checkpoint_id as string;
      const queries = latestQueries();
      const fullLoads = jest.spyOn(PostgresSaver.prototype, 'getTuple');
      const tuple = await gatewayA.getTuple(handed(thread, { checkpointId: newerId, pending: false }));
      expect(queries()).toBe(0);
      expect(fullLoads).toHaveBeenCalledTimes(1);
      expect(contents(tuple!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(['human:one', 'ai:seen 1', 'human:two', 'ai:seen 3']);

      // A now remembers the newer one; pending writes on it, or no checkpoint at all, load.
      await gatewayA.getTuple(handed(thread, { checkpointId: newerId, pending: true }));
      expect(fullLoads).toHaveBeenCalledTimes(2);
      await gatewayA.getTuple(handed(thread, { checkpointId: null, pending: false }));
      expect(fullLoads).toHaveBeenCalledTimes(3);
      expect(queries()).toBe(0);
    });

    it("asks PostgreSQL itself when what it was handed is another thread's", async () => {
      const thread = `cache-${randomUUID()}`;
      await graphOn(gatewayA).invoke(say('one'), config(thread));
      const remembered = (await gatewayA.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } }))!;
      const queries = latestQueries();
      const tuple = await gatewayA.getTuple(
        handed(thread, { checkpointId: remembered.config.configurable!.checkpoint_id, pending: false }, `cache-${randomUUID()}`),
      );
      expect(queries()).toBe(1);
      expect(tuple!.config).toEqual(remembered.config);
    });
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

  it("drops a tenant's threads by their key prefix, and only those", async () => {
    const saver = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 10 });
    const tenant = `ten_${randomUUID().slice(0, 8)}`;
    const threads = [`${tenant}:a`, `${tenant}:b`, `${tenant}x:c`, `other:${tenant}:d`];
    for (const thread of threads) await graphOn(saver).invoke(say('hi'), config(thread));
    expect(saver.cachedThreads).toBe(4);
    expect(saver.forgetThreadsWithPrefix(`${tenant}:`)).toBe(2);
    expect(saver.cachedThreads).toBe(2);
    // A dropped thread loads from PostgreSQL, as a cold gateway would.
    const state = await graphOn(saver).invoke(say('again'), config(`${tenant}:a`));
    expect(contents(state.messages)).toEqual(['human:hi', 'ai:seen 1', 'human:again', 'ai:seen 3']);
    saver.close();
  });

  it('drops threads not used for idleMs', async () => {
    let now = 0;
    const saver = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 10, idleMs: 1000, now: () => now });
    const [first, second, third] = [0, 1, 2].map(() => `cache-${randomUUID()}`);
    await graphOn(saver).invoke(say('one'), config(first!));
    now = 600;
    await graphOn(saver).invoke(say('two'), config(second!));
    now = 1100;
    await graphOn(saver).invoke(say('three'), config(third!));
    // The first was last used 1100 ms ago, the second 500: only the first went.
    expect(saver.cachedThreads).toBe(2);
    const fullLoads = jest.spyOn(PostgresSaver.prototype, 'getTuple');
    await saver.getTuple({ configurable: { thread_id: second!, checkpoint_ns: '' } });
    expect(fullLoads).toHaveBeenCalledTimes(0);
    const reloaded = await saver.getTuple({ configurable: { thread_id: first!, checkpoint_ns: '' } });
    expect(fullLoads).toHaveBeenCalledTimes(1);
    fullLoads.mockRestore();
    expect(contents(reloaded!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(['human:one', 'ai:seen 1']);
    saver.close();
  });

  it("reads the stock saver's checkpoints and carries on from them", async () => {
    const thread = `cache-${randomUUID()}`;
    await graphOn(stock).invoke(say('stock'), config(thread));
    await graphOn(gatewayA).invoke(say('cached'), config(thread));
    await graphOn(gatewayA).invoke(say('cached again'), config(thread));
    const cold = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 10 });
    const state = await graphOn(cold).invoke(say('cold'), config(thread));
    expect(contents(state.messages)).toEqual([
      'human:stock', 'ai:seen 1', 'human:cached', 'ai:seen 3', 'human:cached again', 'ai:seen 5', 'human:cold', 'ai:seen 7',
    ]);
  });

  it('with "async" durability, writes every step as a delta and still loads the next run from memory', async () => {
    const saver = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 10 });
    const thread = `cache-${randomUUID()}`;
    const asyncConfig = { configurable: { thread_id: thread }, durability: 'async' as const };
    const graph = graphOn(saver);
    await graph.invoke(say('one'), asyncConfig);
    const fullLoads = jest.spyOn(PostgresSaver.prototype, 'getTuple');
    const state = await graph.invoke(say('two'), asyncConfig);
    expect(fullLoads).toHaveBeenCalledTimes(0);
    fullLoads.mockRestore();
    expect(contents(state.messages)).toEqual(['human:one', 'ai:seen 1', 'human:two', 'ai:seen 3']);
    const { rows } = await pool.query<{ type: string }>(
      `SELECT type FROM ${SCHEMA}.checkpoint_blobs WHERE thread_id = $1 AND channel = 'messages'`,
      [thread],
    );
    expect(rows.filter((r) => r.type === 'json')).toHaveLength(1);
    expect(rows.length).toBeGreaterThan(2);
    const cold = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 0 });
    const latest = await cold.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } });
    expect(contents(latest!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(contents(state.messages));
  });

  // A run through the gateway with "exit" durability hands its one write to its
  // thread's release, which runs it in its own statement (the repository's release;
  // here a statement of the same form).
  it("holds a run's write for the statement that carries it, and remembers it once committed", async () => {
    const saver = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 10 });
    const cold = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 0 });
    const thread = `cache-${randomUUID()}`;
    const latestIn = async (s: CachedPostgresSaver) =>
      contents(((await s.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } }))?.checkpoint.channel_values.messages ?? []) as BaseMessage[]);
    const carried = async (text: string) => {
      const carrier = new CheckpointCarrier(true);
      await graphOn(saver).invoke(say(text), { configurable: { thread_id: thread, [CONFIG_CHECKPOINT_CARRIER]: carrier }, durability: 'exit' as const });
      return carrier.take()!;
    };
    const release = async (write: CarriedWrite) => {
      await pool.query({ text: `WITH ${write.ctes(2)}, released AS (SELECT $1::text) SELECT 1 FROM released`, values: ['release', ...write.values] });
      write.committed();
    };

    const first = await carried('one');
    // Nothing is written, or remembered, until the release.
    expect(await latestIn(cold)).toEqual([]);
    expect(await latestIn(saver)).toEqual([]);
    await release(first);
    expect(await latestIn(cold)).toEqual(['human:one', 'ai:seen 1']);
    const fullLoads = jest.spyOn(PostgresSaver.prototype, 'getTuple');
    expect(await latestIn(saver)).toEqual(['human:one', 'ai:seen 1']);
    expect(fullLoads).toHaveBeenCalledTimes(0);
    fullLoads.mockRestore();

    // The next run starts from the remembered checkpoint and writes its list as a delta.
    await release(await carried('two'));
    expect(await blobTypesOf(thread)).toEqual(['json', expect.stringMatching(/^drydock-messages-delta\//)]);
    expect(await latestIn(cold)).toEqual(['human:one', 'ai:seen 1', 'human:two', 'ai:seen 3']);
  });

  // With "async" durability LangGraph writes every step, and may start a write before
  // the one before it has returned: nothing is held, each write goes out at once.
  it('holds nothing with "async" durability: every step is written at once, as a delta', async () => {
    const saver = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 10 });
    const thread = `cache-${randomUUID()}`;
    const run = async (text: string) => {
      const carrier = new CheckpointCarrier(false);
      await graphOn(saver).invoke(say(text), { configurable: { thread_id: thread, [CONFIG_CHECKPOINT_CARRIER]: carrier }, durability: 'async' as const });
      expect(carrier.take()).toBeUndefined();
    };
    await run('one');
    await run('two');
    const types = await blobTypesOf(thread);
    expect(types.filter((type) => type === 'json')).toHaveLength(1);
    expect(types.length).toBeGreaterThan(2);
    const cold = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 0 });
    const latest = await cold.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } });
    expect(contents(latest!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(['human:one', 'ai:seen 1', 'human:two', 'ai:seen 3']);
  });

  // A run writes its thread's state only while it holds the thread: here the condition
  // is a row of a table standing in for agent_threads.
  it("writes a run's checkpoints only while its carrier's condition holds", async () => {
    const holders = `cache_holders_${randomUUID().replace(/-/g, '')}`;
    await pool.query(`CREATE TABLE ${holders} (run_id text PRIMARY KEY)`);
    try {
      const saver = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 10 });
      const cold = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 0 });
      const heldBy = (runId: string) => ({ sql: (first: number) => `EXISTS (SELECT 1 FROM ${holders} WHERE run_id = $${first})`, values: [runId] });
      const rowsOf = async (thread: string) => {
        let n = 0;
        for (const table of ['checkpoints', 'checkpoint_blobs', 'checkpoint_writes']) {
          n += (await pool.query<{ n: number }>(`SELECT count(*)::int AS n FROM ${SCHEMA}.${table} WHERE thread_id = $1`, [thread])).rows[0]!.n;
        }
        return n;
      };
      const run = (thread: string, runId: string, durability: 'async' | 'exit') => {
        const carrier = new CheckpointCarrier(durability === 'exit', heldBy(runId));
        return {
          carrier,
          done: graphOn(saver).invoke(say('hi'), { configurable: { thread_id: thread, [CONFIG_CHECKPOINT_CARRIER]: carrier }, durability }),
        };
      };
      await pool.query(`INSERT INTO ${holders} VALUES ('holder')`);

      // Every step written at once ("async"): by the holder, kept; by another run, refused
      // with nothing written, and nothing remembered.
      const kept = `cache-${randomUUID()}`;
      await run(kept, 'holder', 'async').done;
      expect(await rowsOf(kept)).toBeGreaterThan(0);
      const lost = `cache-${randomUUID()}`;
      await expect(run(lost, 'someone-else', 'async').done).rejects.toThrow(/no longer holds thread/);
      expect(await rowsOf(lost)).toBe(0);
      expect(await saver.getTuple({ configurable: { thread_id: lost, checkpoint_ns: '' } })).toBeUndefined();

      // Pending writes (a task's writes with "async" or "sync" durability): the same rule,
      // and the stock saver's: writes to LangGraph's special channels replace, the last of
      // one channel winning; others keep what is stored.
      const keptAt = (await cold.getTuple({ configurable: { thread_id: kept, checkpoint_ns: '' } }))!.config.configurable!.checkpoint_id as string;
      const writesBy = (runId: string) => ({
        configurable: { thread_id: kept, checkpoint_ns: '', checkpoint_id: keptAt, [CONFIG_CHECKPOINT_CARRIER]: new CheckpointCarrier(false, heldBy(runId)) },
      });
      const pendingOn = async () =>
        ((await cold.getTuple({ configurable: { thread_id: kept, checkpoint_ns: '', checkpoint_id: keptAt } }))!.pendingWrites ?? [])
          .map(([task, channel, value]) => `${task} ${channel} ${String(value)}`)
          .sort();
      await expect(saver.putWrites(writesBy('someone-else'), [['branch:to:reply', 'a']], 'task-1')).rejects.toThrow(/no longer holds thread/);
      expect(await pendingOn()).toEqual([]);
      await saver.putWrites(writesBy('holder'), [['branch:to:reply', 'a'], ['extra', 'b']], 'task-1');
      await saver.putWrites(writesBy('holder'), [['branch:to:reply', 'changed'], ['extra', 'b']], 'task-1');
      await saver.putWrites(writesBy('holder'), [['__error__', 'first'], ['__error__', 'second']], 'task-2');
      expect(await pendingOn()).toEqual(['task-1 branch:to:reply a', 'task-1 extra b', 'task-2 __error__ second']);
      await saver.putWrites(writesBy('holder'), [['__error__', 'third']], 'task-2');
      expect(await pendingOn()).toEqual(['task-1 branch:to:reply a', 'task-1 extra b', 'task-2 __error__ third']);
      // A load then goes to PostgreSQL, which has the writes.
      expect((await saver.getTuple({ configurable: { thread_id: kept, checkpoint_ns: '' } }))!.pendingWrites).toHaveLength(3);

      // A carried write under the release's own condition: kept only if it holds.
      const carriedThread = `cache-${randomUUID()}`;
      const exit = run(carriedThread, 'holder', 'exit');
      await exit.done;
      const write = exit.carrier.take()!;
      const releaseWhen = async (holds: boolean) =>
        (await pool.query<{ ok: boolean }>({ text: `WITH ${write.ctes(2, '$1::boolean')} SELECT $1::boolean AS ok`, values: [holds, ...write.values] })).rows[0]!.ok;
      expect(await releaseWhen(false)).toBe(false);
      expect(await rowsOf(carriedThread)).toBe(0);
      expect(await releaseWhen(true)).toBe(true);
      write.committed();
      const stored = await cold.getTuple({ configurable: { thread_id: carriedThread, checkpoint_ns: '' } });
      expect(contents(stored!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(['human:hi', 'ai:seen 1']);
    } finally {
      await pool.query(`DROP TABLE ${holders}`);
    }
  });

  describe('message lists stored as deltas', () => {
    const blobTypes = async (thread: string) =>
      (
        await pool.query<{ type: string; size: number }>(
          `SELECT type, length(blob) AS size FROM ${SCHEMA}.checkpoint_blobs WHERE thread_id = $1 AND channel = 'messages' ORDER BY version::numeric`,
          [thread],
        )
      ).rows;

    it('writes a full list every snapshotEvery versions and only the new messages between', async () => {
      const saver = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 10, snapshotEvery: 3 });
      const thread = `delta-${randomUUID()}`;
      for (let i = 0; i < 7; i++) await graphOn(saver).invoke(say(`turn ${i} ${'x'.repeat(2000)}`), config(thread));
      const rows = await blobTypes(thread);
      expect(rows.map((r) => (r.type === 'json' ? 'full' : r.type.replace(/^drydock-messages-delta\/(\d+)\/.*$/, 'kept $1')))).toEqual([
        'full', 'kept 2', 'kept 4', 'full', 'kept 8', 'kept 10', 'full',
      ]);
      // A delta holds this turn's two messages whatever the length of the thread.
      const deltas = rows.filter((r) => r.type !== 'json');
      expect(Math.max(...deltas.map((r) => r.size)) - Math.min(...deltas.map((r) => r.size))).toBeLessThan(100);
      expect(rows[6].size).toBeGreaterThan(6 * deltas[0].size);
    });

    it('rebuilds every checkpoint of the history from its chain, in a gateway that never saw it', async () => {
      const writer = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 10, snapshotEvery: 4 });
      const thread = `delta-${randomUUID()}`;
      for (let i = 0; i < 6; i++) await graphOn(writer).invoke(say(`t${i}`), config(thread));

      const reader = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 10 });
      const history = [];
      for await (const tuple of reader.list({ configurable: { thread_id: thread } })) history.push(tuple);
      expect(history.map((t) => (t.checkpoint.channel_values.messages as BaseMessage[]).length)).toEqual([12, 10, 8, 6, 4, 2]);
      const latest = await reader.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } });
      expect(contents(latest!.checkpoint.channel_values.messages as BaseMessage[]).slice(-4)).toEqual(['human:t4', 'ai:seen 9', 'human:t5', 'ai:seen 11']);
      const older = await reader.getTuple(history[3].config);
      expect(contents(older!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(['human:t0', 'ai:seen 1', 'human:t1', 'ai:seen 3', 'human:t2', 'ai:seen 5']);
    });

    it('stores a replaced message as a delta that keeps only what came before it', async () => {
      const saver = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 10 });
      // On "edit", the node rewrites the last answer (same id) instead of adding one.
      const graph = new StateGraph(AgentStateAnnotation)
        .addNode('reply', (state: AgentState) => {
          const last = state.messages.at(-1)!;
          if (last.content !== 'edit') return { messages: [new AIMessage(`seen ${state.messages.length}`)] };
          const answer = state.messages.at(-2)!;
          return { messages: [new AIMessage({ content: 'edited', id: answer.id }), new RemoveMessage({ id: last.id! })] };
        })
        .addEdge(START, 'reply')
        .addEdge('reply', END)
        .compile({ checkpointer: saver });
      const thread = `delta-${randomUUID()}`;
      await graph.invoke(say('one'), config(thread));
      await graph.invoke(say('two'), config(thread));
      await graph.invoke({ messages: [new HumanMessage({ content: 'edit', id: `edit-${randomUUID()}` })] }, config(thread));
      const cold = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 10 });
      const latest = await cold.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } });
      expect(contents(latest!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(['human:one', 'ai:seen 1', 'human:two', 'ai:edited']);
      expect((await blobTypes(thread)).at(-1)!.type).toMatch(/^drydock-messages-delta\/3\//);
    });

    it('stores only lists of messages as deltas, also after a channel held one', async () => {
      const saver = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 10 });
      const State = Annotation.Root({ ...AgentStateAnnotation.spec, items: Annotation<unknown[]>() });
      // Each run appends to `items`: a message, then a plain value, then a message again.
      const added: unknown[] = [new HumanMessage('first'), { note: 'not a message' }, new AIMessage('third')];
      const graph = new StateGraph(State)
        .addNode('add', (state: typeof State.State) => ({ items: [...(state.items ?? []), added[(state.items ?? []).length]] }))
        .addEdge(START, 'add')
        .addEdge('add', END)
        .compile({ checkpointer: saver });
      const thread = `delta-${randomUUID()}`;
      for (let i = 0; i < 3; i++) await graph.invoke({ messages: [] }, config(thread));
      const { rows } = await pool.query<{ type: string }>(
        `SELECT type FROM ${SCHEMA}.checkpoint_blobs WHERE thread_id = $1 AND channel = 'items' ORDER BY version::numeric`,
        [thread],
      );
      expect(rows.map((r) => r.type)).toEqual(['json', 'json', 'json']);
      const cold = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 10 });
      const latest = await cold.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } });
      const items = latest!.checkpoint.channel_values.items as unknown[];
      expect(items).toHaveLength(3);
      expect(items[1]).toEqual({ note: 'not a message' });
      expect(String((items[2] as BaseMessage).content)).toBe('third');
    });

    it('writes in full after starting from an older checkpoint (a fork)', async () => {
      const saver = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 10 });
      const thread = `delta-${randomUUID()}`;
      await graphOn(saver).invoke(say('one'), config(thread));
      await graphOn(saver).invoke(say('two'), config(thread));
      const history = [];
      for await (const tuple of saver.list({ configurable: { thread_id: thread } })) history.push(tuple);
      const first = history[1];
      const forked = await graphOn(saver).invoke(say('other two'), {
        configurable: { thread_id: thread, checkpoint_id: first.config.configurable!.checkpoint_id },
        durability: 'exit',
      });
      expect(contents(forked.messages)).toEqual(['human:one', 'ai:seen 1', 'human:other two', 'ai:seen 3']);
      const cold = new CachedPostgresSaver(pool, { schema: SCHEMA, maxThreads: 10 });
      const latest = await cold.getTuple({ configurable: { thread_id: thread, checkpoint_ns: '' } });
      expect(contents(latest!.checkpoint.channel_values.messages as BaseMessage[])).toEqual(contents(forked.messages));
      // The fork's list is stored whole (two full lists and the second turn's delta in
      // all; versions of two branches do not sort by time, so compare as a set).
      const forkVersion = String(latest!.checkpoint.channel_versions.messages);
      const { rows } = await pool.query<{ type: string }>(
        `SELECT type FROM ${SCHEMA}.checkpoint_blobs WHERE thread_id = $1 AND channel = 'messages' AND version = $2`,
        [thread, forkVersion],
      );
      expect(rows.map((r) => r.type)).toEqual(['json']);
      expect((await blobTypes(thread)).map((r) => r.type === 'json').sort()).toEqual([false, true, true]);
    });
  });
});
