import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { Redis } from 'ioredis';
import { executionInterruptChannel, executionInterruptedKey, executionLaneKey } from '@drydock/execution';
import { SessionJobsProcessor } from '../../apps/worker/src/processors/session-jobs.processor.js';
import { AGENT_RUNTIME, ScriptedModelProvider, type AgentRuntime, type ChatScript } from '@drydock/agents';
import { endedExecution, executionIds, runningExecution } from './support/executions.js';
import { startPlatform, type Platform } from './support/platform.js';
import { pollUntil } from './support/until.js';

// Stopping code before its time limit: POST /v1/executions/:id/interrupt,
// POST /v1/sessions/:id/interrupt, and an agent run cancelled while its tool runs code.
// Every long run below has a time limit of minutes, so only the interrupt can end it
// within the seconds each test allows.
const LONG_MS = 240_000;
const LOOP = "print('running', flush=True)\nwhile True: pass";

describe('Interrupting executions', () => {
  let platform: Platform;
  let runtime: AgentRuntime;
  let redis: Redis;
  let script: ChatScript = () => new AIMessage('no script');

  beforeAll(async () => {
    platform = await startPlatform({}, { chatModels: new ScriptedModelProvider(() => (turn) => script(turn)) });
    runtime = platform.gateway.get<AgentRuntime>(AGENT_RUNTIME);
    redis = new Redis(process.env.REDIS_URL!);
  });

  afterAll(async () => {
    await redis?.quit();
    await platform?.close();
  });

  // Kills the interrupt subscribers of this test database's workers (others on the
  // server are left alone) and waits until one is subscribed again and has had time to
  // catch up with the marks.
  async function reconnectInterruptSubscribers(): Promise<void> {
    const subscribers = async () =>
      ((await redis.client('LIST')) as string)
        .split('\n')
        .filter((line) => line.includes(' name=drydock-worker-interrupts ') && line.includes(` db=${redis.options.db ?? 0} `))
        .map((line) => /^id=(\d+)/.exec(line)![1]!);
    const killed = await subscribers();
    expect(killed.length).toBeGreaterThan(0);
    for (const clientId of killed) await redis.client('KILL', 'ID', clientId);
    const channel = executionInterruptChannel(platform.workerId);
    await pollUntil(
      async () => (await subscribers()).some((id) => !killed.includes(id)) && ((await redis.pubsub('NUMSUB', channel)) as [string, number])[1] > 0,
      20_000,
      20,
      'the interrupt subscriber back',
    );
    // Its catch-up (two reads) follows the subscription's confirmation.
    await new Promise((resolve) => setTimeout(resolve, 500));
  }

  it('should stop a running execution with a KeyboardInterrupt and keep the session\'s variables', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    await api.execute(session.id, 'x = 41');
    const started = Date.now();
    const pending = api.execute(session.id, LOOP, { timeoutMs: LONG_MS });
    const id = await runningExecution(platform.admin, api.tenantId);

    const res = await api.post(`/v1/executions/${id}/interrupt`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ id, status: 'running', requested: true });

    const run = await pending;
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(run.body).toMatchObject({ id, status: 'error', stdout: 'running\n', stateLost: false });
    expect(run.body.error.name).toBe('KeyboardInterrupt');
    expect(run.body.error.traceback).toContain('while True: pass');
    const after = await api.execute(session.id, 'x + 1');
    expect(after.body).toMatchObject({ status: 'ok', result: { text: '42' }, stateLost: false });

    // The interrupt left its mark, kept while such a run could still be going.
    expect(await redis.ttl(executionInterruptedKey(id))).toBeGreaterThan(3600);

    // Ended now: nothing is sent, and the record stays as it ended.
    const again = await api.post(`/v1/executions/${id}/interrupt`);
    expect(again.status).toBe(202);
    expect(again.body).toEqual({ id, status: 'error', requested: false });
  });

  it('should answer 404 for an execution that is not the tenant\'s', async () => {
    const owner = await platform.newTenant();
    const other = await platform.newTenant();
    const session = await owner.createSession();
    const run = await owner.execute(session.id, '1');

    const res = await other.post(`/v1/executions/${run.body.id}/interrupt`);
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('EXECUTION_NOT_FOUND');
    expect((await other.post('/v1/executions/exe_does_not_exist/interrupt')).body.error.code).toBe('EXECUTION_NOT_FOUND');
    expect((await other.post(`/v1/sessions/${session.id}/interrupt`)).body.error.code).toBe('SESSION_NOT_FOUND');
  });

  it('should stop the running execution of a session and never run the one waiting behind it', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const first = api.execute(session.id, LOOP, { timeoutMs: LONG_MS });
    const firstId = await runningExecution(platform.admin, api.tenantId);
    const second = api.execute(session.id, 'waited = True');
    // The second is recorded (queued) before the interrupt lists the session's executions.
    let listed: string[] = [];
    await pollUntil(async () => (listed = [firstId, ...(await executionIds(platform.admin, api.tenantId, 'queued'))]).length >= 2, 20_000, 50, 'the second execution queued');
    expect(listed).toHaveLength(2);

    const res = await api.post(`/v1/sessions/${session.id}/interrupt`);
    expect(res.status).toBe(202);
    expect(res.body).toEqual({ sessionId: session.id, interrupted: listed });

    expect((await first).body).toMatchObject({ id: firstId, status: 'error', error: { name: 'KeyboardInterrupt' } });
    const waited = (await second).body;
    expect(waited).toMatchObject({ id: listed[1], status: 'error', error: { name: 'KeyboardInterrupt' } });
    expect(waited.error.value).toContain('before its code ran');
    expect((await api.execute(session.id, "'waited' in globals()")).body.result.text).toBe('False');

    // Nothing runs now: an empty list.
    expect((await api.post(`/v1/sessions/${session.id}/interrupt`)).body).toEqual({ sessionId: session.id, interrupted: [] });
  });

  it("should stop a run whose interrupt was sent while the worker's subscriber was away", async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const started = Date.now();
    const pending = api.execute(session.id, LOOP, { timeoutMs: LONG_MS });
    const id = await runningExecution(platform.admin, api.tenantId);

    // The interrupt's message never reached the worker; its mark is there, as a gateway
    // leaves it with every interrupt. Then the worker's subscriber reconnects (the
    // subscribers of this test database's workers: others on the server are left alone).
    await redis.set(executionInterruptedKey(id), '1', 'EX', 600);
    await reconnectInterruptSubscribers();

    const run = await pending;
    expect(Date.now() - started).toBeLessThan(30_000);
    expect(run.body).toMatchObject({ id, status: 'error', error: { name: 'KeyboardInterrupt' } });
  });

  it("should not run a job recorded before the worker's subscriber came back and pushed after its catch-up", async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    await api.execute(session.id, 'x = 1');
    const processor = platform.worker.get(SessionJobsProcessor);
    const lane = executionLaneKey(platform.workerId);
    processor.pauseExecutions();
    let pending: ReturnType<typeof api.execute> | undefined;
    try {
      // Past the take already waiting when the pause came (it would hold the job).
      await new Promise((resolve) => setTimeout(resolve, 1200));
      pending = api.execute(session.id, 'ran = True');
      let ids: string[] = [];
      await pollUntil(async () => (ids = await executionIds(platform.admin, api.tenantId, 'queued')).length > 0, 20_000, 20, 'the execution queued');
      const id = ids[0]!;
      await pollUntil(async () => (await redis.llen(lane)) > 0, 20_000, 20, 'the job on the lane');
      // The job is on its way (out of the lane, as between a gateway's insert and its
      // push) while its interrupt is published to no one, then the worker's subscriber
      // comes back and catches up with the lane as it is.
      const payload = (await redis.rpop(lane))!;
      expect(payload).toContain(id);
      await redis.set(executionInterruptedKey(id), '1', 'EX', 600);
      await reconnectInterruptSubscribers();
      await redis.lpush(lane, payload);
    } finally {
      processor.resumeExecutions();
    }

    const run = (await pending!).body;
    expect(run).toMatchObject({ status: 'error', error: { name: 'KeyboardInterrupt' } });
    expect(run.error.value).toContain('before its code ran');
    expect((await api.execute(session.id, "'ran' in globals()")).body.result.text).toBe('False');
  });

  it('should interrupt the code of a tool call when its agent run is cancelled', async () => {
    const api = await platform.newTenant();
    const threadId = 'cancelled-while-running';
    script = () =>
      new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'execute_python', args: { code: LOOP }, type: 'tool_call' }] });
    const config = await runtime.runConfig(api.tenantId, threadId, 'agent');
    const cancel = new AbortController();
    const run = runtime.graph.invoke({ messages: [new HumanMessage('loop forever')] }, { ...config, signal: cancel.signal });
    const id = await runningExecution(platform.admin, api.tenantId);
    cancel.abort();
    await expect(run).rejects.toThrow();

    // The cell ends within seconds, not at the tool's time limit.
    const record = await endedExecution(api, id);
    expect(record).toMatchObject({ status: 'error', error: { name: 'KeyboardInterrupt' } });
  });
});
