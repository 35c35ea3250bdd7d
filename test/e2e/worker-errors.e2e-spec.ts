import { mkdirSync, rmSync, writeFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import type { Redis } from 'ioredis';
import type { INestApplicationContext } from '@nestjs/common';
import { REDIS } from '@drydock/core';
import { executionLaneActiveKey, executionLaneKey, JOB_DISPATCHER, workerQueueName, type JobDispatcher } from '@drydock/execution';
import { ErrorResponseFilter } from '../../apps/gateway/src/http/error-response.filter.js';
import { SessionJobsProcessor } from '../../apps/worker/src/processors/session-jobs.processor.js';
import type { ApiResponse } from './support/api-client.js';
import { startPlatform, type Platform } from './support/platform.js';
import { pollUntil } from './support/until.js';

const DATASETS_DIR = resolve('var/test-datasets-worker-errors');
const STAGE_LIMIT = 1000;

// A failure on the worker's side of a job reaches the client as the worker's own typed
// error (code and status), never as a wait timeout or a 500. The gateway checks the
// session and the dataset before it sends a job; these errors arise when something
// changes between that check and the worker's, which the tests arrange by holding the
// worker's queue (BullMQ's pause; for executions, the pause of its execution lane) while
// they change it.
describe('Worker-side errors reach the client typed', () => {
  let platform: Platform;
  let db: DataSource;

  // Holds the jobs of a worker's queue while `change` runs, once `request`'s job waits.
  async function whileQueued(workerId: string, request: () => Promise<ApiResponse>, change: () => Promise<unknown> | unknown) {
    const queue = new Queue(workerQueueName(workerId), { connection: { url: process.env.REDIS_URL } });
    await queue.pause();
    try {
      const pending = request();
      await until(async () => Object.values(await queue.getJobCounts('wait', 'waiting', 'prioritized')).some((n) => n > 0));
      await change();
      await queue.resume();
      return await pending;
    } finally {
      await queue.resume().catch(() => undefined);
      await queue.close();
    }
  }

  // The same for an execution: holds `worker`'s execution lane.
  async function whileExecutionQueued(
    worker: { id: string; app: INestApplicationContext },
    request: () => Promise<ApiResponse>,
    change: () => Promise<unknown> | unknown,
  ) {
    const processor = worker.app.get(SessionJobsProcessor);
    const redis = worker.app.get<symbol, Redis>(REDIS);
    processor.pauseExecutions();
    try {
      const pending = request();
      // In the lane, or taken by a take already in flight and held.
      await until(async () => (await redis.llen(executionLaneKey(worker.id))) + (await redis.llen(executionLaneActiveKey(worker.id))) > 0);
      await change();
      processor.resumeExecutions();
      return await pending;
    } finally {
      processor.resumeExecutions();
    }
  }

  // A session that a fresh worker will look up in PostgreSQL on its next job: its row names
  // a worker that never hosted it (as after a move the gateway made).
  async function sessionOnFreshWorker(api: Awaited<ReturnType<Platform['newTenant']>>, threadId: string) {
    // Created before the fresh worker exists, so it is hosted elsewhere.
    const session = await api.createSession({ threadId });
    const fresh = await platform.addWorker();
    await db.query('UPDATE sessions SET worker_id = $1 WHERE id = $2', [fresh.id, session.id]);
    // The gateway's view of live workers is up to a second old.
    await until(async () => ((await platform.admin.get('/admin/workers')).body.workers ?? []).some((w: { id: string }) => w.id === fresh.id));
    await new Promise((resolve) => setTimeout(resolve, 1100));
    return { session, worker: fresh, stop: fresh.stop };
  }

  beforeAll(async () => {
    rmSync(DATASETS_DIR, { recursive: true, force: true });
    mkdirSync(join(DATASETS_DIR, 'shared', 'sales'), { recursive: true });
    writeFileSync(join(DATASETS_DIR, 'shared', 'sales', 'north.csv'), 'region,total\nnorth,10\n');
    platform = await startPlatform({ DATASETS_DIR, DATASETS_MAX_STAGED_BYTES: String(STAGE_LIMIT), WORKER_HEARTBEAT_MS: '500' });
    db = platform.gateway.get(DataSource);
  });

  afterAll(async () => {
    await platform?.close();
    rmSync(DATASETS_DIR, { recursive: true, force: true });
  });

  it('should answer SESSION_ENDED (409) to a run queued behind another when its session is deleted', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession({ threadId: 'ended-while-queued' });
    const first = api.execute(session.id, 'import time\ntime.sleep(2)');
    await until(async () => (await db.query(`SELECT 1 FROM executions WHERE session_id = $1`, [session.id])).length > 0);
    const second = api.execute(session.id, 'print("never")');
    await until(async () => (await db.query(`SELECT 1 FROM executions WHERE session_id = $1`, [session.id])).length > 1);
    expect((await api.delete(`/v1/sessions/${session.id}`)).status).toBe(204);
    const [, refused] = await Promise.all([first, second]);
    expect(refused.status).toBe(409);
    expect(refused.body.error.code).toBe('SESSION_ENDED');
    // The refused run left no queued execution behind.
    const queued = await db.query(`SELECT id FROM executions WHERE session_id = $1 AND status = 'queued'`, [session.id]);
    expect(queued).toEqual([]);
  });

  it('should answer SESSION_ENDED (409) when the worker finds the session ended after the gateway sent the run', async () => {
    const api = await platform.newTenant();
    const { session, worker, stop } = await sessionOnFreshWorker(api, 'ended-on-worker');
    try {
      const res = await whileExecutionQueued(
        worker,
        () => api.execute(session.id, 'print(1)'),
        () => db.query(`UPDATE sessions SET status = 'ended' WHERE id = $1`, [session.id]),
      );
      expect(res.status).toBe(409);
      expect(res.body.error).toMatchObject({ code: 'SESSION_ENDED' });
    } finally {
      await stop();
    }
  });

  it('should answer SESSION_NOT_FOUND (404) when the session is gone by the time the worker looks, also when the reply is missed', async () => {
    const api = await platform.newTenant();
    const { session, worker, stop } = await sessionOnFreshWorker(api, 'gone-on-worker');
    // The gateway misses the worker's reply (as while its subscriber reconnects): its
    // periodic look at the job must still find the typed error stored as its outcome.
    const dispatcher = platform.gateway.get<JobDispatcher>(JOB_DISPATCHER) as unknown as {
      subscriber: { unsubscribe(channel: string): Promise<unknown>; subscribe(channel: string): Promise<unknown> };
      replyChannel: string;
    };
    try {
      const res = await whileExecutionQueued(
        worker,
        () => api.execute(session.id, 'print(1)'),
        async () => {
          await dispatcher.subscriber.unsubscribe(dispatcher.replyChannel);
          await db.query('DELETE FROM executions WHERE session_id = $1', [session.id]);
          await db.query('DELETE FROM sessions WHERE id = $1', [session.id]);
        },
      );
      expect(res.status).toBe(404);
      expect(res.body.error).toMatchObject({ code: 'SESSION_NOT_FOUND' });
    } finally {
      await dispatcher.subscriber.subscribe(dispatcher.replyChannel);
      await stop();
    }
  });

  it('should answer DATASET_NOT_FOUND (422) when the dataset is removed before the worker stages it', async () => {
    const api = await platform.newTenant();
    mkdirSync(join(DATASETS_DIR, 'shared', 'fleeting'));
    writeFileSync(join(DATASETS_DIR, 'shared', 'fleeting', 'a.txt'), 'a');
    const session = await api.createSession({ threadId: 'dataset-gone' });
    const res = await whileQueued(
      session.workerId,
      () => api.post(`/v1/sessions/${session.id}/datasets`, { name: 'fleeting' }),
      () => rmSync(join(DATASETS_DIR, 'shared', 'fleeting'), { recursive: true }),
    );
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'DATASET_NOT_FOUND' });
  });

  it('should answer DATASET_TOO_LARGE (422) when the dataset grows past the limit before the worker stages it', async () => {
    const api = await platform.newTenant();
    mkdirSync(join(DATASETS_DIR, 'shared', 'growing'));
    writeFileSync(join(DATASETS_DIR, 'shared', 'growing', 'a.txt'), 'small');
    const session = await api.createSession({ threadId: 'dataset-grows' });
    const res = await whileQueued(
      session.workerId,
      () => api.post(`/v1/sessions/${session.id}/datasets`, { name: 'growing' }),
      () => writeFileSync(join(DATASETS_DIR, 'shared', 'growing', 'b.bin'), Buffer.alloc(STAGE_LIMIT + 1)),
    );
    expect(res.status).toBe(422);
    expect(res.body.error).toMatchObject({ code: 'DATASET_TOO_LARGE' });
    // The session is as it was: the dataset is not recorded on it.
    expect((await api.get(`/v1/sessions/${session.id}`)).body.datasets ?? []).toEqual([]);
  });

  it('should give any other worker failure the stable code WORKER_FAILED (502), without its internals', async () => {
    const dispatcher = platform.gateway.get<JobDispatcher>(JOB_DISPATCHER);
    const error = await dispatcher
      .dispatch(platform.workerId, 'no-such-job' as never, {} as never, { waitMs: 10_000 })
      .catch((e: unknown) => e);
    const { status, body } = new ErrorResponseFilter().toResponse(error);
    expect(status).toBe(502);
    expect(body.error.code).toBe('WORKER_FAILED');
    expect(body.error.message).not.toContain('no-such-job');
  });

  // Last: it stops the platform's own worker, so the session can only land on one that
  // cannot start containers.
  it('should answer SANDBOX_UNAVAILABLE (503) when the worker cannot start a container', async () => {
    await platform.stopWorker();
    const broken = await platform.addWorker({ SANDBOX_IMAGE: 'drydock/no-such-image:latest' });
    const api = await platform.newTenant();
    try {
      await until(async () => {
        const workers: { id: string }[] = (await platform.admin.get('/admin/workers')).body.workers ?? [];
        return workers.length === 1 && workers[0]!.id === broken.id;
      });
      await new Promise((resolve) => setTimeout(resolve, 1100));
      const res = await api.post('/v1/sessions', { threadId: 'no-image' });
      expect(res.status).toBe(503);
      expect(res.body.error.code).toBe('SANDBOX_UNAVAILABLE');
      expect(res.body.error.message).toMatch(/could not be started/);
    } finally {
      await broken.stop();
    }
  });
});

const until = (check: () => Promise<boolean>, timeoutMs = 10_000) => pollUntil(check, timeoutMs, 25);
