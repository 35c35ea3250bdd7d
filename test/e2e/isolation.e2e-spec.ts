import { E2E_TIER, startPlatform, type Platform } from './support/platform.js';

describe('Sandbox isolation and limits', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform();
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should run the container non-root, read-only, without capabilities or network, with every limit set', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession({ limits: { memoryMb: 256, cpus: 0.5 } });
    const info = await platform.containerOf(session.id);
    const host = info.HostConfig;

    // Started as root with nothing but what setting the supervisor's ids takes; user code
    // runs as 10001 with no capability (checked from the inside below; the process
    // separation itself: sandbox-hardening.e2e-spec.ts).
    expect(info.Config.User).toBe('0:0');
    expect(host.ReadonlyRootfs).toBe(true);
    expect(host.CapDrop).toEqual(['ALL']);
    // (Docker reports the names it was given, with or without the CAP_ prefix.)
    expect([...(host.CapAdd ?? [])].map((c) => c.replace(/^CAP_/, '')).sort()).toEqual(['SETGID', 'SETUID']);
    expect(host.Privileged).toBe(false);
    expect(host.SecurityOpt).toContain('no-new-privileges:true');
    expect(host.NetworkMode).toBe('none');
    expect(host.Memory).toBe(256 * 1024 * 1024);
    expect(host.MemorySwap).toBe(host.Memory);
    expect(host.NanoCpus).toBe(500_000_000);
    expect(host.PidsLimit).toBeGreaterThan(0);
    expect(host.Init).toBe(true);
    expect(host.Binds ?? []).toEqual([]);
    expect(host.Tmpfs!['/tmp']).toMatch(/size=\d+m/);
    if (E2E_TIER === 'gvisor') {
      // /session: a tmpfs of the container, which gVisor keeps in the sandbox's memory
      // (saved by a checkpoint), size-capped and the sandbox user's (docs/security.md).
      expect(Object.keys(host.Tmpfs ?? {}).sort()).toEqual(['/session', '/tmp']);
      expect(host.Tmpfs!['/session']).toMatch(/^rw,exec,nosuid,nodev,size=\d+m,uid=10001,gid=10001,mode=0700$/);
      expect(info.Mounts.find((m) => m.Destination === '/session')).toBeUndefined();
    } else {
      expect(Object.keys(host.Tmpfs ?? {})).toEqual(['/tmp']);
      // /session: a per-session volume backed by tmpfs, size-capped (reachable by the
      // archive API, unlike a --tmpfs mount).
      const sessionMount = info.Mounts.find((m) => m.Destination === '/session')!;
      expect(sessionMount).toMatchObject({ Type: 'volume', RW: true });
      const volume = await platform.docker.getVolume(sessionMount.Name!).inspect();
      expect(volume.Options).toMatchObject({ type: 'tmpfs', device: 'tmpfs' });
      expect(volume.Options!.o).toMatch(/size=\d+m,uid=10001,gid=10001,mode=0700,nosuid,nodev/);
      expect(volume.Labels).toMatchObject({ 'drydock.session': session.id });
    }
    for (const variable of info.Config.Env) {
      expect(variable).not.toMatch(/^(DATABASE_URL|REDIS_URL|DRYDOCK_ADMIN_KEY)=/);
    }

    // And from the inside.
    const inside = await api.execute(
      session.id,
      [
        'import os',
        'caps = [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapEff")][0]',
        'try:',
        '    open("/usr/local/owned", "w")',
        '    root_writable = True',
        'except OSError:',
        '    root_writable = False',
        'open("/session/ok.txt", "w").write("fine")',
        'prm = [l.split()[1] for l in open("/proc/self/status") if l.startswith("CapPrm")][0]',
        '(os.getresuid(), caps, prm, root_writable, sorted(k for k in os.environ if "KEY" in k or "URL" in k))',
      ].join('\n'),
    );
    expect(inside.body.status).toBe('ok');
    expect(inside.body.result.text).toBe("((10001, 10001, 10001), '0000000000000000', '0000000000000000', False, [])");
  });

  it('should have no network inside the sandbox', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const code = [
      'import urllib.request',
      'failures = []',
      'for url in ["http://1.1.1.1", "http://172.17.0.1:80", "http://127.0.0.1:6379", "http://example.com"]:',
      '    try:',
      '        urllib.request.urlopen(url, timeout=3)',
      '    except Exception as e:',
      '        failures.append(type(e).__name__)',
      'len(failures)',
    ].join('\n');
    const res = await api.execute(session.id, code);
    expect(res.body.status).toBe('ok');
    expect(res.body.result.text).toBe('4');
    const direct = await api.execute(session.id, 'urllib.request.urlopen("http://1.1.1.1", timeout=3)');
    expect(direct.body.status).toBe('error');
    expect(direct.body.error.name).toBe('URLError');
  });

  it('should stop an endless loop at its timeout and keep the session working', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    await api.execute(session.id, 'kept = "still here"');
    const started = Date.now();
    const res = await api.execute(session.id, 'while True: pass', { timeoutMs: 2000 });
    const elapsed = Date.now() - started;
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('timeout');
    expect(elapsed).toBeGreaterThanOrEqual(1900);
    expect(elapsed).toBeLessThan(6000);

    const after = await api.execute(session.id, 'kept');
    expect(after.body).toMatchObject({ status: 'ok', stateLost: false });
    expect(after.body.result.text).toBe("'still here'");
  });

  it('should restart the interpreter when code ignores the interrupt, and say the state was lost', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    await api.execute(session.id, 'kept = 1');
    const stubborn = [
      'import signal, time',
      'signal.signal(signal.SIGINT, signal.SIG_IGN)',
      'while True: time.sleep(0.1)',
    ].join('\n');
    const res = await api.execute(session.id, stubborn, { timeoutMs: 1500 });
    expect(res.body.status).toBe('timeout');

    const after = await api.execute(session.id, '"kept" in globals()');
    expect(after.body).toMatchObject({ status: 'ok', stateLost: true });
    expect(after.body.result.text).toBe('False');
    const next = await api.execute(session.id, '1 + 1');
    expect(next.body).toMatchObject({ status: 'ok', stateLost: false });
  });

  it('should report an out-of-memory kill as status memory and recover the session', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession({ limits: { memoryMb: 128 } });
    await api.execute(session.id, 'kept = 1');
    const res = await api.execute(session.id, 'hog = b"x" * (1024 * 1024 * 1024)');
    expect(res.status).toBe(200);
    // Under gVisor the cgroup holds the Sentry itself: the kill may take the whole
    // sandbox, and then Docker does not always say it was the OOM killer (docs/security.md,
    // "The gvisor tier"): memory, or killed.
    expect(E2E_TIER === 'gvisor' ? ['memory', 'killed'] : ['memory']).toContain(res.body.status);

    const after = await api.execute(session.id, '"kept" in globals(), 6 * 7');
    expect(after.body).toMatchObject({ status: 'ok', stateLost: true });
    expect(after.body.result.text).toBe('(False, 42)');
  });

  it('should contain a fork bomb with the pids limit and keep the worker and other sessions healthy', async () => {
    const api = await platform.newTenant();
    const bystander = await api.createSession();
    const victim = await api.createSession();
    const bomb = ['import os', 'while True:', '    try:', '        os.fork()', '    except OSError:', '        pass'].join('\n');
    const res = await api.execute(victim.id, bomb, { timeoutMs: 3000 });
    expect(['timeout', 'killed']).toContain(res.body.status);

    // Another session on the same worker answers promptly.
    const started = Date.now();
    const other = await api.execute(bystander.id, 'sum(range(1000))');
    expect(other.body.result.text).toBe('499500');
    expect(Date.now() - started).toBeLessThan(5000);

    // The victim works again and its leftover processes are gone. Killed processes can
    // linger a moment as zombies until the container's init reaps them (a loaded CI
    // machine), so live ones are counted, and the count is given a few seconds to settle.
    const countLive = [
      'import os',
      'def state(p):',
      '    try:',
      '        return open(f"/proc/{p}/stat").read().rsplit(")", 1)[1].split()[0]',
      '    except OSError:',
      '        return "gone"',
      'len([p for p in os.listdir("/proc") if p.isdigit() and state(p) not in ("Z", "X", "gone")])',
    ].join('\n');
    let live = Infinity;
    for (let attempt = 0; attempt < 10 && live >= 10; attempt++) {
      if (attempt > 0) await new Promise((r) => setTimeout(r, 500));
      const after = await api.execute(victim.id, countLive);
      expect(after.body.status).toBe('ok');
      live = Number(after.body.result.text);
    }
    expect(live).toBeLessThan(10);
    const health = await platform.anonymous.get('/health');
    expect(health.status).toBe(200);
  });

  it("should clamp caller limits to the tenant's maxima", async () => {
    const api = await platform.newTenant({ memoryMb: 256, cpus: 0.5, timeoutMs: 3000 });
    const res = await api.post('/v1/sessions', { limits: { memoryMb: 4096, cpus: 4, timeoutMs: 600_000 } });
    expect(res.status).toBe(201);
    expect(res.body.limits).toMatchObject({ memoryMb: 256, cpus: 0.5, timeoutMs: 3000 });
    const info = await platform.containerOf(res.body.id);
    expect(info.HostConfig.Memory).toBe(256 * 1024 * 1024);
    expect(info.HostConfig.NanoCpus).toBe(500_000_000);

    // A per-execution timeout above the tenant's maximum is clamped too.
    const started = Date.now();
    const run = await api.execute(res.body.id, 'import time\ntime.sleep(30)', { timeoutMs: 60_000 });
    expect(run.body.status).toBe('timeout');
    expect(Date.now() - started).toBeLessThan(8000);
  });
});
