import { ArtifactsService } from '@drydock/artifacts';
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
