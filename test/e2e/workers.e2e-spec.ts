import { startPlatform, type Platform } from './support/platform.js';

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

async function eventually<T>(probe: () => Promise<T>, accept: (value: T) => boolean, timeoutMs = 10_000): Promise<T> {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const value = await probe();
    if (accept(value) || Date.now() > deadline) return value;
    await sleep(200);
  }
}

describe('Workers: idle reaping', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ SESSION_IDLE_TIMEOUT_MS: '1500', SESSION_REAPER_INTERVAL_MS: '300' });
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should end a session nobody used for the idle time and remove its container', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    await api.execute(session.id, 'x = 1');
    const ended = await eventually(() => api.get(`/v1/sessions/${session.id}`), (res) => res.body.status === 'ended');
    expect(ended.body).toMatchObject({ status: 'ended', endReason: 'idle' });
    await expect(platform.containerOf(session.id)).rejects.toThrow('no running container');
    // The thread can start again.
    const again = await api.post('/v1/sessions', { threadId: session.threadId });
    expect(again.status).toBe(201);
    expect(again.body.id).not.toBe(session.id);
  });
});

describe('Workers: sessions abandoned by a stopped worker', () => {
  let platform: Platform;

  beforeAll(async () => {
    // The idle time outlasts adding and stopping a worker (over 1.5 s in a busy CI run,
    // when the session was already ended at the first look), so the test sees it lost.
    platform = await startPlatform({ SESSION_IDLE_TIMEOUT_MS: '5000', SESSION_REAPER_INTERVAL_MS: '300' });
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should end them after the idle time so they stop counting against the tenant', async () => {
    const api = await platform.newTenant({ maxSessions: 1 });
    const session = await api.createSession();
    await platform.addWorker();
    await platform.stopWorker();
    expect((await api.get(`/v1/sessions/${session.id}`)).body.status).toBe('lost');

    const ended = await eventually(() => api.get(`/v1/sessions/${session.id}`), (res) => res.body.status === 'ended', 20_000);
    expect(ended.body).toMatchObject({ status: 'ended', endReason: 'worker-lost' });
    expect((await api.post('/v1/sessions', {})).status).toBe(201);
  });
});

describe('Workers: placement and loss', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform();
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should list live workers and their queues to operators', async () => {
    const workers = await platform.admin.get('/admin/workers');
    expect(workers.body.workers.map((w: { id: string }) => w.id)).toContain(platform.workerId);
    const queues = await platform.admin.get('/admin/queues');
    expect(queues.body.queues.find((q: { workerId: string }) => q.workerId === platform.workerId)).toMatchObject({
      queue: `drydock-worker-${platform.workerId}`,
    });
  });

  it('should move a session to a live worker when its worker stops, and say the state was lost', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    expect(session.workerId).toBe(platform.workerId);
    await api.execute(session.id, 'x = 41');

    const second = await platform.addWorker();
    await platform.stopWorker();

    const res = await api.execute(session.id, '"x" in globals()');
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', stateLost: true });
    expect(res.body.result.text).toBe('False');
    expect((await api.get(`/v1/sessions/${session.id}`)).body).toMatchObject({ workerId: second.id, status: 'ready' });
    expect((await api.execute(session.id, '1 + 1')).body).toMatchObject({ status: 'ok', stateLost: false });
    await second.stop();
  });

  it('should give up on a run whose worker stopped heartbeating and re-create the session elsewhere', async () => {
    // The only live worker: it announces itself once, then looks dead to everyone while
    // its container keeps running the code.
    const flaky = await platform.addWorker({ WORKER_HEARTBEAT_MS: '600000', WORKER_HEARTBEAT_TTL_MS: '5000', WORKER_DRAIN_TIMEOUT_MS: '0' });
    const api = await platform.newTenant();
    const session = await api.createSession();
    expect(session.workerId).toBe(flaky.id);

    const started = Date.now();
    const res = await api.execute(session.id, 'import time\ntime.sleep(30)', { timeoutMs: 60_000 });
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'killed', error: { name: 'WorkerLost' } });
    expect(Date.now() - started).toBeLessThan(20_000);

    const healthy = await platform.addWorker();
    const next = await api.execute(session.id, '2 + 2');
    expect(next.body).toMatchObject({ status: 'ok', stateLost: true });
    expect((await api.get(`/v1/sessions/${session.id}`)).body.workerId).toBe(healthy.id);
  });
});
