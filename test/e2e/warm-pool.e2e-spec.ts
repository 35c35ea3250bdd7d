import { DataSource } from 'typeorm';
import { startPlatform, type Platform } from './support/platform.js';
import { pollUntil } from './support/until.js';

// The warm pool (WORKER_POOL_SIZE): a new session with the default limits takes a
// started sandbox instead of starting one; the pool refills; a pooled sandbox holds no
// tenant's data until it is taken and is never used again after its session; sessions
// the pool cannot serve start cold.
describe('Warm sandbox pool', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ WORKER_POOL_SIZE: '2' });
  });

  afterAll(async () => {
    await platform?.close();
  });

  const worker = async () => {
    const res = await platform.admin.get('/admin/workers');
    return (res.body.workers as { id: string; lastSeenAt: string; pool?: { size: number; ready: number; starting: number } }[]).find(
      (w) => w.id === platform.workerId,
    );
  };
  const pool = async () => (await worker())?.pool;
  // The worker's pooled containers not yet any session's, by id (a taken one keeps the
  // labels it was started with; the session row records it).
  const pooledIds = async () => {
    const all = await platform.docker.listContainers({ filters: { label: [`drydock.worker=${platform.workerId}`] } });
    const rows: { container_id: string }[] = await platform.gateway
      .get(DataSource)
      .query('SELECT container_id FROM sessions WHERE container_id IS NOT NULL');
    const owned = new Set(rows.map((r) => r.container_id));
    return new Set(all.filter((c) => c.Labels['drydock.session']!.startsWith('pool-') && !owned.has(c.Id)).map((c) => c.Id));
  };
  const containerOf = async (sessionId: string): Promise<string> => {
    const rows = await platform.gateway.get(DataSource).query('SELECT container_id FROM sessions WHERE id = $1', [sessionId]);
    return rows[0].container_id;
  };
  // Full: two pooled containers up, and a heartbeat sent since we asked says both are
  // ready (GET /admin/workers shows the last beat).
  const full = () => {
    const since = Date.now();
    return until(async () => {
      const w = await worker();
      return Date.parse(w?.lastSeenAt ?? '') > since && w?.pool?.ready === 2 && (await pooledIds()).size === 2;
    });
  };

  it('should show its size and fill in GET /admin/workers, and fill up at start', async () => {
    await full();
    expect(await pool()).toEqual({ size: 2, ready: 2, starting: 0 });
    const pooled = await platform.docker.listContainers({ filters: { label: [`drydock.worker=${platform.workerId}`] } });
    expect(pooled).toHaveLength(2);
    // Nothing of any tenant: no session, no tenant, an empty /session.
    for (const c of pooled) expect(c.Labels).toMatchObject({ 'drydock.tenant': 'none' });
  });

  it('should give a new session a pooled sandbox, refill, and never hand it out again', async () => {
    await full();
    const before = await pooledIds();
    const a = await platform.newTenant();
    const session = await a.createSession({ threadId: 'warm-a' });
    const taken = await containerOf(session.id);
    expect(before.has(taken)).toBe(true);
    // A fresh interpreter and a /session with nothing but the empty artifacts folder.
    const first = await a.execute(session.id, 'import os\nsecret = "a-only"\nsorted(os.listdir("/session")), os.listdir("/session/artifacts")');
    expect(first.body).toMatchObject({ status: 'ok', result: { text: "(['artifacts'], [])" }, stateLost: false });
    expect((await a.execute(session.id, 'secret')).body).toMatchObject({ status: 'ok', result: { text: "'a-only'" } });

    await full();
    expect((await pooledIds()).has(taken)).toBe(false);
    // Another tenant gets another sandbox, which has none of the first one's state.
    const b = await platform.newTenant();
    const other = await b.createSession({ threadId: 'warm-b' });
    expect(await containerOf(other.id)).not.toBe(taken);
    expect((await b.execute(other.id, 'secret')).body).toMatchObject({ status: 'error', error: { name: 'NameError' } });

    // Ended: the container goes, and never back to the pool.
    expect((await a.delete(`/v1/sessions/${session.id}`)).status).toBe(204);
    await until(async () => (await platform.docker.listContainers({ all: true, filters: { id: [taken] } })).length === 0);
    await full();
    expect((await pooledIds()).has(taken)).toBe(false);
  });

  it('should give a pooled session the same isolation as a cold one, and nothing of an earlier holder', async () => {
    await full();
    const api = await platform.newTenant();
    const [pooled, cold] = [await api.createSession({ threadId: 'pool-iso' }), await api.createSession({ threadId: 'cold-iso', limits: { memoryMb: 320 } })];
    const [p, c] = [await platform.containerOf(pooled.id), await platform.containerOf(cold.id)];
    // The same hardening; only the requested memory differs.
    const hardening = (i: typeof p) => ({
      user: i.Config.User,
      readOnly: i.HostConfig.ReadonlyRootfs,
      capDrop: i.HostConfig.CapDrop,
      capAdd: i.HostConfig.CapAdd,
      securityOpt: i.HostConfig.SecurityOpt,
      network: i.HostConfig.NetworkMode,
      pids: i.HostConfig.PidsLimit,
      cpus: i.HostConfig.NanoCpus,
      init: i.HostConfig.Init,
      ipc: i.HostConfig.IpcMode,
      env: i.Config.Env,
    });
    expect(hardening(p)).toEqual(hardening(c));
    expect(p.HostConfig.Memory).toBe(512 * 1024 * 1024);
    expect(c.HostConfig.Memory).toBe(320 * 1024 * 1024);
    // Inside: no process but the REPL's own, no file, and its own namespaces.
    const probe = [
      'import os, json',
      'procs = sorted(open(f"/proc/{p}/cmdline", "rb").read().replace(b"\\0", b" ").decode().strip() for p in os.listdir("/proc") if p.isdigit())',
      'print(json.dumps({"tmp": os.listdir("/tmp"), "session": sorted(os.listdir("/session")), "artifacts": os.listdir("/session/artifacts"), "user": [p for p in procs if "sleep" in p or "python3 -c" in p]}))',
    ].join('\n');
    const inside = await api.execute(pooled.id, probe);
    expect(JSON.parse(inside.body.stdout)).toEqual({ tmp: [], session: ['artifacts'], artifacts: [], user: [] });
    const ns = async (id: string) => (await api.execute(id, 'import os\nprint(os.readlink("/proc/self/ns/pid"), os.readlink("/proc/self/ns/mnt"))')).body.stdout;
    expect(await ns(pooled.id)).not.toBe(await ns(cold.id));
  });

  it('should start a session the pool cannot serve cold, leaving the pool as it was', async () => {
    await full();
    const before = await pooledIds();
    const api = await platform.newTenant();
    const session = await api.createSession({ threadId: 'warm-other-limits', limits: { memoryMb: 320 } });
    const container = await containerOf(session.id);
    expect(before.has(container)).toBe(false);
    expect(await pooledIds()).toEqual(before);
    const inspect = await platform.docker.getContainer(container).inspect();
    expect(inspect.HostConfig.Memory).toBe(320 * 1024 * 1024);
    expect(inspect.Config.Labels).toMatchObject({ 'drydock.session': session.id });
  });

  it('should remove the pool when the worker drains', async () => {
    await full();
    const pooled = await pooledIds();
    expect((await platform.admin.post(`/admin/workers/${platform.workerId}/drain`)).status).toBe(202);
    await until(async () => (await pool())?.ready === 0);
    const left = await platform.docker.listContainers({ all: true, filters: { label: [`drydock.worker=${platform.workerId}`] } });
    expect(left.filter((c) => pooled.has(c.Id))).toEqual([]);
  });
});

const until = (check: () => Promise<boolean>, timeoutMs = 30_000) => pollUntil(check, timeoutMs, 50);
