import { randomUUID } from 'node:crypto';
import { Redis } from 'ioredis';
import { DataSource } from 'typeorm';
import { REDIS } from '@drydock/core';
import {
  executionLaneActiveKey,
  executionLaneKey,
  executionOutcomeKey,
  JOB_DISPATCHER,
  type ExecutionLaneJob,
  type JobDispatcher,
  type JobReply,
} from '@drydock/execution';
import { ExecutionLaneConsumer } from '../../apps/worker/src/processors/execution-lane.consumer.js';
import { SessionJobsProcessor } from '../../apps/worker/src/processors/session-jobs.processor.js';
import { startPlatform, type Platform } from './support/platform.js';
import { applyTestEnv } from './support/test-env.js';
import { pollUntil } from './support/until.js';

// Executions travel to their worker on its execution lane, a Redis list
// (docs/decisions/011-execution-lane.md). First the consumer alone against real Redis,
// then the gateway's side through a running platform.

const until = (check: () => Promise<boolean> | boolean, timeoutMs = 10_000) => pollUntil(check, timeoutMs, 20);

function laneJob(overrides: Partial<ExecutionLaneJob> = {}): ExecutionLaneJob {
  const executionId = `exe_${randomUUID().slice(0, 8)}`;
  return {
    session: { sessionId: 'ses_x', tenantId: 'ten_x', threadId: 't', limits: {} as never },
    executionId,
    code: 'print(1)',
    timeoutMs: 1000,
    jobId: `exec-${executionId}`,
    dispatchId: randomUUID(),
    enqueuedAt: Date.now(),
    ...overrides,
  };
}

describe('ExecutionLaneConsumer (real Redis)', () => {
  let redis: Redis;
  let subscriber: Redis;
  let workerId: string;
  let consumer: ExecutionLaneConsumer | null;
  const replies: JobReply[] = [];
  const replyChannel = `drydock:job-reply:lane-test-${randomUUID()}`;

  beforeAll(async () => {
    applyTestEnv();
    redis = new Redis(process.env.REDIS_URL!, { maxRetriesPerRequest: null });
    subscriber = new Redis(process.env.REDIS_URL!);
    subscriber.on('message', (_channel: string, message: string) => replies.push(JSON.parse(message) as JobReply));
    await subscriber.subscribe(replyChannel);
  });

  beforeEach(() => {
    workerId = `lane-test-${randomUUID().slice(0, 8)}`;
    replies.length = 0;
    consumer = null;
  });

  afterEach(async () => {
    await consumer?.close();
    await redis.del(executionLaneKey(workerId), executionLaneActiveKey(workerId));
  });

  afterAll(async () => {
    await Promise.all([redis.quit(), subscriber.quit()]);
  });

  const push = (job: ExecutionLaneJob) => redis.lpush(executionLaneKey(workerId), JSON.stringify({ ...job, replyTo: replyChannel }));
  const outcomeOf = async (job: ExecutionLaneJob) => JSON.parse((await redis.get(executionOutcomeKey(job.dispatchId))) ?? 'null');

  it('should run jobs oldest first, at most `concurrency` at once, each taken into `active` until answered', async () => {
    const started: string[] = [];
    const gates = new Map<string, () => void>();
    consumer = new ExecutionLaneConsumer(redis, process.env.REDIS_URL!, workerId, 2, (job) => {
      started.push(job.executionId);
      return new Promise((resolve) => gates.set(job.executionId, () => resolve({ jobId: job.jobId, ok: true, value: { id: job.executionId } })));
    });
    await consumer.start();
    const jobs = [laneJob(), laneJob(), laneJob()];
    for (const job of jobs) await push(job);

    await until(() => started.length === 2);
    expect(started).toEqual([jobs[0]!.executionId, jobs[1]!.executionId]);
    expect(await redis.llen(executionLaneActiveKey(workerId))).toBe(2);
    expect(await redis.llen(executionLaneKey(workerId))).toBe(1);

    gates.get(jobs[0]!.executionId)!();
    await until(() => started.length === 3);
    await until(async () => (await outcomeOf(jobs[0]!)) !== null);
    expect(await outcomeOf(jobs[0]!)).toEqual({ ok: true });
    await until(() => replies.length === 1);
    expect(replies[0]).toEqual({ jobId: jobs[0]!.jobId, ok: true, value: { id: jobs[0]!.executionId } });

    gates.get(jobs[1]!.executionId)!();
    gates.get(jobs[2]!.executionId)!();
    await until(async () => (await redis.llen(executionLaneActiveKey(workerId))) === 0);
    expect(await redis.llen(executionLaneKey(workerId))).toBe(0);
  });

  it('should store a typed failure as the outcome, for a gateway that missed the reply', async () => {
    const error = { code: 'SESSION_NOT_FOUND', status: 404, message: 'gone' };
    consumer = new ExecutionLaneConsumer(redis, process.env.REDIS_URL!, workerId, 4, async (job) => ({ jobId: job.jobId, ok: false, error }));
    await consumer.start();
    const job = laneJob();
    await push(job);
    await until(async () => (await outcomeOf(job)) !== null);
    expect(await outcomeOf(job)).toEqual({ ok: false, error });
    expect(await redis.ttl(executionOutcomeKey(job.dispatchId))).toBeGreaterThan(0);
  });

  it("should free the tenant's execution slot with the answer of a job it ran, not of one it sends back", async () => {
    const slotKey = `drydock:rate:executions:lane-test-${workerId}`;
    await redis.zadd(slotKey, Date.now() + 60_000, 'hold_ran', Date.now() + 60_000, 'hold_moved');
    consumer = new ExecutionLaneConsumer(redis, process.env.REDIS_URL!, workerId, 4, async (job) => ({ jobId: job.jobId, ok: true, value: null }));
    await consumer.start();
    const ran = laneJob({ slot: { key: slotKey, id: 'hold_ran' } });
    await push(ran);
    await until(async () => (await outcomeOf(ran)) !== null);
    expect(await redis.zrange(slotKey, 0, -1)).toEqual(['hold_moved']);

    expect(await consumer.drain(1000)).toBe(true);
    const moved = laneJob({ slot: { key: slotKey, id: 'hold_moved' } });
    await push(moved);
    const error = { code: 'SESSION_MOVED', status: 503, message: 'moved' };
    expect(await consumer.answerWaiting(() => ({ ok: false, error }))).toBe(1);
    expect(await redis.zrange(slotKey, 0, -1)).toEqual(['hold_moved']);
    await redis.del(slotKey);
  });

  it('should answer `lost` to the jobs a previous life of the worker took and never answered', async () => {
    const stale = laneJob();
    await redis.lpush(executionLaneActiveKey(workerId), JSON.stringify(stale));
    const handled: string[] = [];
    consumer = new ExecutionLaneConsumer(redis, process.env.REDIS_URL!, workerId, 4, async (job) => {
      handled.push(job.executionId);
      return { jobId: job.jobId, ok: true, value: null };
    });
    await consumer.start();
    expect(await outcomeOf(stale)).toEqual({ lost: true });
    expect(await redis.llen(executionLaneActiveKey(workerId))).toBe(0);
    expect(handled).toEqual([]);
  });

  it('should hold the lane while paused, stop taking on drain, and answer what is left', async () => {
    const handled: string[] = [];
    consumer = new ExecutionLaneConsumer(redis, process.env.REDIS_URL!, workerId, 4, async (job) => {
      handled.push(job.executionId);
      return { jobId: job.jobId, ok: true, value: null };
    });
    await consumer.start();
    consumer.pause();
    // The take already waiting when the pause came brings it in, and holds it.
    const held = laneJob();
    await push(held);
    await new Promise((resolve) => setTimeout(resolve, 1200));
    expect(handled).toEqual([]);
    consumer.resume();
    await until(() => handled.length === 1);

    expect(await consumer.drain(1000)).toBe(true);
    const left = laneJob();
    await push(left);
    await new Promise((resolve) => setTimeout(resolve, 300));
    expect(handled).toEqual([held.executionId]);
    const error = { code: 'SESSION_MOVED', status: 503, message: 'moved' };
    expect(await consumer.answerWaiting(() => ({ ok: false, error }))).toBe(1);
    expect(await outcomeOf(left)).toEqual({ ok: false, error });
    await until(() => replies.some((r) => r.jobId === left.jobId));
    expect(replies.find((r) => r.jobId === left.jobId)).toEqual({ jobId: left.jobId, ok: false, error });
    expect(await redis.llen(executionLaneKey(workerId))).toBe(0);
    expect(await redis.llen(executionLaneActiveKey(workerId))).toBe(0);
  });
});

describe('Executions on the lane, through the gateway', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ WORKER_HEARTBEAT_MS: '500' });
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should answer from PostgreSQL when the reply is missed, and list the lane to operators', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession({ threadId: 'lane-missed-reply' });
    const dispatcher = platform.gateway.get<JobDispatcher>(JOB_DISPATCHER) as unknown as {
      subscriber: { unsubscribe(channel: string): Promise<unknown>; subscribe(channel: string): Promise<unknown> };
      replyChannel: string;
    };
    await api.execute(session.id, 'x = 1');
    await dispatcher.subscriber.unsubscribe(dispatcher.replyChannel);
    try {
      const res = await api.execute(session.id, 'print(x + 1)');
      expect(res.status).toBe(200);
      expect(res.body).toMatchObject({ status: 'ok', stdout: '2\n' });
    } finally {
      await dispatcher.subscriber.subscribe(dispatcher.replyChannel);
    }
    const queues = await platform.admin.get('/admin/queues');
    expect(queues.body.queues.find((q: { workerId: string }) => q.workerId === platform.workerId)).toMatchObject({
      executions: { waiting: 0, active: 0 },
    });
  });

  it('should end the wait when the job is lost with Redis data, and never run it', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession({ threadId: 'lane-lost-job' });
    const processor = platform.worker.get(SessionJobsProcessor);
    const redis = platform.gateway.get<symbol, Redis>(REDIS);
    processor.pauseExecutions();
    try {
      // Past the take that was already waiting when the pause came (it would hold the
      // job in \`active\`).
      await new Promise((resolve) => setTimeout(resolve, 1200));
      const pending = api.execute(session.id, 'print("never")');
      await until(async () => (await redis.llen(executionLaneKey(platform.workerId))) > 0);
      await redis.del(executionLaneKey(platform.workerId));
      const res = await pending;
      expect(res.status).toBe(504);
      expect(res.body.error).toMatchObject({ code: 'EXECUTION_WAIT_TIMEOUT' });
      const rows: { status: string }[] = await platform.gateway
        .get(DataSource)
        .query(`SELECT status FROM executions WHERE session_id = $1 AND code = 'print("never")'`, [session.id]);
      expect(rows).toEqual([{ status: 'queued' }]);
    } finally {
      processor.resumeExecutions();
    }
  });

  it('should claim only executions that can be dispatched again, for about the start deadline, not for good', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession({ threadId: 'lane-claim-ttl' });
    const redis = platform.gateway.get<symbol, Redis>(REDIS);
    // Without an idempotency key an execution has one dispatch, and no claim.
    const plain = await api.execute(session.id, 'print(1)');
    expect(await redis.exists(`drydock:exec-claimed:${plain.body.id}`)).toBe(0);
    const res = await api.execute(session.id, 'print(1)', { timeoutMs: 30_000, idempotencyKey: 'claim-ttl' });
    expect(res.status).toBe(200);
    const ttl = await redis.pttl(`drydock:exec-claimed:${res.body.id}`);
    // The default deadline (1 h), the run's timeout, 15 minutes' margin.
    expect(ttl).toBeGreaterThan(60 * 60_000);
    expect(ttl).toBeLessThanOrEqual((60 + 15) * 60_000 + 30_000);
  });

  it('should not run an execution retried with its idempotency key after its start deadline', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession({ threadId: 'lane-expired' });
    const processor = platform.worker.get(SessionJobsProcessor);
    const redis = platform.gateway.get<symbol, Redis>(REDIS);
    const db = platform.gateway.get(DataSource);
    const code = 'open("/session/ran.txt", "w").write("ran")';
    processor.pauseExecutions();
    try {
      await new Promise((resolve) => setTimeout(resolve, 1200));
      const pending = api.execute(session.id, code, { idempotencyKey: 'late-1' });
      await until(async () => (await redis.llen(executionLaneKey(platform.workerId))) > 0);
      await redis.del(executionLaneKey(platform.workerId));
      expect((await pending).status).toBe(504);
    } finally {
      processor.resumeExecutions();
    }
    // Submitted two hours ago and never started; the client retries now.
    await db.query(`UPDATE executions SET created_at = now() - interval '2 hours' WHERE session_id = $1`, [session.id]);
    const retried = await api.execute(session.id, code, { idempotencyKey: 'late-1' });
    expect(retried.status).toBe(200);
    expect(retried.body).toMatchObject({ status: 'killed', error: { name: 'ExecutionExpired' } });
    expect((await api.execute(session.id, 'import os; print(os.path.exists("/session/ran.txt"))')).body.stdout).toBe('False\n');
  });
});
