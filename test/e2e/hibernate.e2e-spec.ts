import { ArtifactsService } from '@drydock/artifacts';
import { pollUntil } from './support/until.js';
import { startPlatform, type Platform } from './support/platform.js';

// Sessions that keep their memory (docs/sessions.md, decision 018), under gVisor
// (SANDBOX_GVISOR_RUNTIME, registered by scripts/lib/services.sh ensure_gvisor): a
// hibernated session's container is gone; its next execution restores it with its
// variables, its background processes and its files.
describe('Hibernate and resume (gVisor)', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ SANDBOX_GVISOR_RUNTIME: 'runsc', SESSION_HIBERNATE_AFTER_MS: '600000' });
  });

  afterAll(async () => {
    await platform?.close();
  });

  const containersOf = async (sessionId: string) =>
    platform.docker.listContainers({ all: true, filters: { label: [`drydock.session=${sessionId}`] } });

  it('should checkpoint a session, remove its container, and resume it with its variables, processes and files', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession({ tier: 'gvisor' });
    expect(session).toMatchObject({ tier: 'gvisor' });
    const setUp = await api.execute(
      session.id,
      'x = 41\nopen("/session/notes.txt", "w").write("kept")\nopen("/tmp/scratch", "w").write("tmp kept")',
    );
    expect(setUp.body).toMatchObject({ status: 'ok' });
    const bg = await api.post(`/v1/sessions/${session.id}/commands`, {
      command: 'i=0; while true; do i=$((i+1)); echo $i > /tmp/ticks; sleep 0.2; done',
      background: true,
    });
    expect(bg.status).toBe(202);
    expect((await containersOf(session.id)).length).toBe(1);

    const hibernated = await api.post(`/v1/sessions/${session.id}/hibernate`);
    expect(hibernated.status).toBe(202);
    expect(hibernated.body).toMatchObject({ id: session.id, status: 'hibernated', tier: 'gvisor' });
    expect(hibernated.body.hibernatedAt).toEqual(expect.any(String));
    expect(await containersOf(session.id)).toEqual([]);
    // The checkpoint is a blob of the artifact store, which its collection keeps.
    const artifacts = platform.gateway.get(ArtifactsService);
    await artifacts.collectGarbage();
    // Asked again: it is hibernated already.
    expect((await api.post(`/v1/sessions/${session.id}/hibernate`)).body).toMatchObject({ status: 'hibernated' });

    const resumed = await api.execute(
      session.id,
      'import os, time\nt0 = int(open("/tmp/ticks").read())\ntime.sleep(1)\nprint(x + 1, open("/session/notes.txt").read(), open("/tmp/scratch").read(), int(open("/tmp/ticks").read()) > t0)',
    );
    expect(resumed.body).toMatchObject({ status: 'ok', stdout: '42 kept tmp kept True\n', stateLost: false });
    expect(resumed.body.resumedMs).toEqual(expect.any(Number));
    expect((await api.get(`/v1/sessions/${session.id}`)).body).toMatchObject({ status: 'ready', hibernatedAt: null });
    const processes = await api.get(`/v1/sessions/${session.id}/processes`);
    expect(processes.body.processes).toEqual([expect.objectContaining({ id: bg.body.id, status: 'running' })]);
  });

  it('should answer 422 CHECKPOINT_NOT_AVAILABLE for a session on the runc tier, which runs on', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    expect(session).toMatchObject({ tier: 'runc' });
    await api.execute(session.id, 'y = 1');
    const res = await api.post(`/v1/sessions/${session.id}/hibernate`);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('CHECKPOINT_NOT_AVAILABLE');
    expect((await api.execute(session.id, 'y')).body).toMatchObject({ status: 'ok', stateLost: false });
  });

  it("should keep tenants to their tiers: TIER_NOT_ALLOWED outside the tenant's, gvisor by default when it is the first", async () => {
    const api = await platform.newTenant({ tiers: ['gvisor'] });
    const refused = await api.post('/v1/sessions', { tier: 'runc' });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'TIER_NOT_ALLOWED', details: { allowed: ['gvisor'] } });
    expect(await api.createSession()).toMatchObject({ tier: 'gvisor' });
  });
});

describe('Idle sessions hibernate (gVisor)', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ SANDBOX_GVISOR_RUNTIME: 'runsc', SESSION_HIBERNATE_AFTER_MS: '1000', SESSION_REAPER_INTERVAL_MS: '300' });
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should hibernate a session idle past SESSION_HIBERNATE_AFTER_MS, then resume it on its next execution', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession({ tier: 'gvisor' });
    await api.execute(session.id, 'words = ["kept", "across", "idle"]');
    await pollUntil(async () => (await api.get(`/v1/sessions/${session.id}`)).body.status === 'hibernated', 20_000, 200, 'the idle hibernation');
    const resumed = await api.execute(session.id, 'print(" ".join(words))');
    expect(resumed.body).toMatchObject({ status: 'ok', stdout: 'kept across idle\n', stateLost: false, resumedMs: expect.any(Number) });
  });
});

describe('Hibernated sessions move with a drain (gVisor)', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ SANDBOX_GVISOR_RUNTIME: 'runsc', WORKER_HEARTBEAT_MS: '300', WORKER_DRAIN_TIMEOUT_MS: '20000' });
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should resume on another worker a session hibernated before the drain, and one the drain hibernated', async () => {
    const api = await platform.newTenant();
    const before = await api.createSession({ tier: 'gvisor', threadId: 'hibernated-first' });
    const during = await api.createSession({ tier: 'gvisor', threadId: 'live-at-the-drain' });
    expect([before.workerId, during.workerId]).toEqual([platform.workerId, platform.workerId]);
    await api.execute(before.id, 'a = "hibernated on A"');
    await api.execute(during.id, 'b = "live on A"');
    expect((await api.post(`/v1/sessions/${before.id}/hibernate`)).status).toBe(202);
    const other = await platform.addWorker();
    try {
      expect((await platform.admin.post(`/admin/workers/${platform.workerId}/drain`, {})).status).toBe(202);
      await pollUntil(
        async () => (await platform.admin.get('/admin/workers')).body.workers.some((w: { id: string; state: string }) => w.id === platform.workerId && w.state === 'drained'),
        60_000,
        200,
        'the drain',
      );
      // The drain checkpointed the live one instead of losing it.
      expect((await api.get(`/v1/sessions/${during.id}`)).body).toMatchObject({ status: 'hibernated' });
      for (const [session, code, out] of [
        [before, 'print(a)', 'hibernated on A\n'],
        [during, 'print(b)', 'live on A\n'],
      ] as const) {
        const run = await api.execute(session.id, code);
        expect(run.body).toMatchObject({ status: 'ok', stdout: out, stateLost: false });
        expect((await api.get(`/v1/sessions/${session.id}`)).body).toMatchObject({ status: 'ready', workerId: other.id });
      }
    } finally {
      await other.stop();
    }
  });
});
