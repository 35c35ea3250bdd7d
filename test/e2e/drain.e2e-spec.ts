import { executionIds } from './support/executions.js';
import { startPlatform, type Platform } from './support/platform.js';
import { pollUntil } from './support/until.js';

// Draining a worker (POST /admin/workers/:id/drain; SIGTERM does the same and then
// exits): it finishes what runs, takes no new session, hands its sessions back (they
// move with their files), and leaves no container behind.
describe('Worker drain', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ WORKER_HEARTBEAT_MS: '300', WORKER_DRAIN_TIMEOUT_MS: '20000' });
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should finish a running execution, take no new session, and move its sessions with their files', async () => {
    const api = await platform.newTenant();
    // The platform's worker hosts the session; a second worker joins afterwards.
    const session = await api.createSession({ threadId: 'drained' });
    expect(session.workerId).toBe(platform.workerId);
    expect((await api.execute(session.id, 'open("/session/notes.txt", "w").write("kept")\nx = 1')).body.status).toBe('ok');
    const other = await platform.addWorker();
    try {
      const running = api.execute(session.id, 'import time\ntime.sleep(3)\nx += 1\nprint("finished", x)');
      await new Promise((r) => setTimeout(r, 500));
      const drain = await platform.admin.post(`/admin/workers/${platform.workerId}/drain`, {});
      expect(drain.status).toBe(202);
      expect(drain.body).toMatchObject({ id: platform.workerId, drainRequested: true });

      // A run sent while the worker drains waits, then is resent to the session's next
      // worker by the gateway (the drained worker answers SESSION_MOVED).
      await until(async () => (await stateOf(platform, platform.workerId)) === 'draining');
      const sentDuringDrain = api.execute(session.id, 'print("after the drain")');

      // The 3 s run finishes where it started, with the state it had.
      const finished = await running;
      expect(finished.body).toMatchObject({ status: 'ok', stdout: 'finished 2\n', stateLost: false });

      const resent = await sentDuringDrain;
      expect(resent.body).toMatchObject({ status: 'ok', stdout: 'after the drain\n', stateLost: true });
      await until(async () => (await stateOf(platform, platform.workerId)) === 'drained');
      // A new session goes to the other worker.
      const fresh = await api.createSession({ threadId: 'after-drain' });
      expect(fresh.workerId).toBe(other.id);
      // The drained worker's session runs on the other worker, with its files (the loss
      // of its variables was reported once, to the run resent during the drain).
      const moved = await api.execute(session.id, 'print(open("/session/notes.txt").read())');
      expect(moved.body).toMatchObject({ status: 'ok', stdout: 'kept\n', stateLost: false });
      expect((await api.get(`/v1/sessions/${session.id}`)).body.workerId).toBe(other.id);
      // Nothing of the drained worker is left on Docker.
      const left = await platform.docker.listContainers({ all: true, filters: { label: [`drydock.worker=${platform.workerId}`] } });
      expect(left).toEqual([]);
    } finally {
      await other.stop();
    }
  });

  it('should refuse to drain a worker that is not live', async () => {
    const res = await platform.admin.post('/admin/workers/no-such-worker/drain', {});
    expect(res.status).toBe(404);
    expect(res.body.error.code).toBe('WORKER_NOT_FOUND');
  });
});

// An interrupt sent while a draining worker holds the run reaches the worker the gateway
// then resends it to (the interrupt's mark, docs/architecture.md "Interrupts").
describe('Worker drain with an interrupted run waiting', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ WORKER_HEARTBEAT_MS: '300', WORKER_DRAIN_TIMEOUT_MS: '20000' });
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should not run on the next worker a run interrupted while the drained worker held it', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession({ threadId: 'interrupted-in-drain' });
    expect((await api.execute(session.id, 'x = 1')).body.status).toBe('ok');
    const other = await platform.addWorker();
    try {
      const running = api.execute(session.id, 'import time\ntime.sleep(3)');
      await new Promise((r) => setTimeout(r, 500));
      expect((await platform.admin.post(`/admin/workers/${platform.workerId}/drain`, {})).status).toBe(202);
      await until(async () => (await stateOf(platform, platform.workerId)) === 'draining');
      const waiting = api.execute(session.id, 'print("ran")');
      let queued: string[] = [];
      await until(async () => (queued = await executionIds(platform.admin, api.tenantId, 'queued')).length === 1);

      // The session still belongs to the draining worker: the interrupt goes there.
      const res = await api.post(`/v1/executions/${queued[0]}/interrupt`);
      expect(res.body).toMatchObject({ id: queued[0], requested: true });
      expect((await running).body.status).toBe('ok');

      // Sent back (SESSION_MOVED) and resent to the other worker, it does not run there.
      const run = (await waiting).body;
      expect(run).toMatchObject({ id: queued[0], status: 'error', stdout: '', error: { name: 'KeyboardInterrupt' } });
      expect(run.error.value).toContain('before its code ran');
      expect((await api.get(`/v1/sessions/${session.id}`)).body.workerId).toBe(other.id);
    } finally {
      await other.stop();
    }
  });
});

const until = (check: () => Promise<boolean>, timeoutMs = 30_000) => pollUntil(check, timeoutMs, 100);

// A worker's state as GET /admin/workers lists it.
async function stateOf(platform: Platform, workerId: string): Promise<string | undefined> {
  const workers = (await platform.admin.get('/admin/workers')).body.workers as { id: string; state?: string }[];
  return workers.find((w) => w.id === workerId)?.state;
}
