import { startPlatform, type Platform } from './support/platform.js';
import { startWorkerProcess, type WorkerProcess } from './support/worker-process.js';

// Two workers as processes of their own (the platform's in-process worker is stopped):
// sessions spread by free capacity; a worker SIGKILLed mid-run ends that run `killed`
// within the heartbeat TTL plus 2 s; the session's next run works on the other worker with
// the thread's files; nothing of the dead worker is left on Docker after the TTL.
describe('Failover between worker processes', () => {
  const TTL_MS = 3_000;
  const fast = { WORKER_HEARTBEAT_MS: '500', WORKER_HEARTBEAT_TTL_MS: String(TTL_MS), WORKER_ORPHAN_SWEEP_MS: '1000', WORKER_CAPACITY: '10' };
  let platform: Platform;
  const workers: WorkerProcess[] = [];

  beforeAll(async () => {
    platform = await startPlatform(fast);
    await platform.stopWorker();
    workers.push(await startWorkerProcess(fast), await startWorkerProcess(fast));
  });

  afterAll(async () => {
    await Promise.allSettled(workers.map((w) => w.kill('SIGTERM')));
    await platform?.close();
  });

  it('should spread sessions, end a run on a killed worker as killed in time, and move its session with its files', async () => {
    const api = await platform.newTenant();
    const sessions: Awaited<ReturnType<typeof api.createSession>>[] = [];
    for (let i = 0; i < 4; i++) {
      sessions.push(await api.createSession({ threadId: `spread-${i}` }));
      // Placement reads the load workers report with their heartbeat: let one pass.
      await new Promise((r) => setTimeout(r, 700));
    }
    const ids = workers.map((w) => w.id);
    const count = (id: string) => sessions.filter((s) => s.workerId === id).length;
    // Placement by free capacity: two each.
    expect(ids.map(count)).toEqual([2, 2]);

    const [doomed, survivor] = workers;
    const victim = sessions.find((s) => s.workerId === doomed!.id)!;
    await api.request('PUT', `/v1/threads/${victim.threadId}/files/content?path=/kept.txt`, { body: 'kept', headers: { 'content-type': 'text/plain' } });
    expect((await api.execute(victim.id, 'x = 1')).body.status).toBe('ok');

    const running = api.execute(victim.id, 'import time\ntime.sleep(30)');
    await new Promise((r) => setTimeout(r, 1_000));
    const killedAt = Date.now();
    await doomed!.kill('SIGKILL');
    const ended = await running;
    expect(ended.body).toMatchObject({ status: 'killed', error: { name: 'WorkerLost' } });
    expect(Date.now() - killedAt).toBeLessThan(TTL_MS + 2_000);

    const next = await api.execute(victim.id, 'print(open("/session/kept.txt").read())');
    expect(next.body).toMatchObject({ status: 'ok', stdout: 'kept\n', stateLost: true });
    expect((await api.get(`/v1/sessions/${victim.id}`)).body.workerId).toBe(survivor!.id);

    // The survivor's orphan sweep removes what the dead worker left, after the TTL.
    const leftOf = async () => (await platform.docker.listContainers({ all: true, filters: { label: [`drydock.worker=${doomed!.id}`] } })).length;
    const deadline = Date.now() + TTL_MS + 10_000;
    while ((await leftOf()) > 0 && Date.now() < deadline) await new Promise((r) => setTimeout(r, 250));
    expect(await leftOf()).toBe(0);
  });
});
