import { DENIED_SYSCALLS, SANDBOX_SECCOMP_PROFILE } from '@drydock/docker-sandbox';
import { startPlatform, type Platform } from './support/platform.js';

// User code cannot tamper with the sandbox's own processes (decision 007): it runs as
// another user than the supervisor, under our seccomp profile. Tried as a hostile user
// would, from inside an execution.
describe('Sandbox hardening', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform();
  });

  afterAll(async () => {
    await platform?.close();
  });

  const run = async (api: Awaited<ReturnType<Platform['newTenant']>>, sessionId: string, code: string) => {
    const res = await api.execute(sessionId, code);
    expect(res.status).toBe(200);
    expect(res.body.status).toBe('ok');
    return res.body;
  };

  it('should run every container under our seccomp profile', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const info = await platform.containerOf(session.id);
    const seccomp = info.HostConfig.SecurityOpt!.find((opt: string) => opt.startsWith('seccomp='))!;
    expect(JSON.parse(seccomp.slice('seccomp='.length))).toEqual(JSON.parse(JSON.stringify(SANDBOX_SECCOMP_PROFILE)));
    expect(info.HostConfig.SecurityOpt).toContain('no-new-privileges:true');
  });

  it('should fail ptrace(PTRACE_ATTACH) on every other process of the container, and the denied calls', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const body = await run(
      api,
      session.id,
      [
        'import ctypes, errno, json, os',
        'libc = ctypes.CDLL(None, use_errno=True)',
        'attached = {}',
        'for pid in sorted(int(p) for p in os.listdir("/proc") if p.isdigit()):',
        '    if pid == os.getpid():',
        '        continue',
        '    result = libc.ptrace(16, pid, None, None)  # PTRACE_ATTACH',
        '    attached[pid] = "attached" if result == 0 else errno.errorcode.get(ctypes.get_errno())',
        'syscall = libc.syscall',
        'def denied(number, *args):',
        '    return syscall(number, *args) == -1 and ctypes.get_errno() == errno.EPERM',
        // x86_64 numbers: process_vm_readv 310, personality 135, keyctl 250, bpf 321,
        // userfaultfd 323, perf_event_open 298, io_uring_setup 425, unshare 272.
        'calls = {name: denied(n, 0, 0, 0, 0, 0) for name, n in [("process_vm_readv", 310), ("personality", 135), ("keyctl", 250),',
        '         ("bpf", 321), ("userfaultfd", 323), ("perf_event_open", 298), ("io_uring_setup", 425), ("unshare", 272)]}',
        'print(json.dumps({"attached": attached, "calls": calls, "pids": len(attached)}))',
      ].join('\n'),
    );
    const out = JSON.parse(body.stdout);
    // tini (pid 1), the supervisor, and the kernel's own parent chain at least.
    expect(out.pids).toBeGreaterThanOrEqual(2);
    for (const outcome of Object.values(out.attached)) expect(outcome).toBe('EPERM');
    expect(out.calls).toEqual(Object.fromEntries(Object.keys(out.calls).map((name) => [name, true])));
    for (const name of Object.keys(out.calls)) expect(DENIED_SYSCALLS).toHaveProperty(name);
  });

  it('should run user code as another user than the supervisor, which user code cannot signal', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const body = await run(
      api,
      session.id,
      [
        'import json, os, signal',
        'def ids(pid):',
        '    return [int(x) for x in [l for l in open(f"/proc/{pid}/status") if l.startswith("Uid:")][0].split()[1:4]]',
        'supervisor = os.getppid()',
        'sent = {}',
        'for pid, sig in [(supervisor, signal.SIGTERM), (supervisor, signal.SIGSTOP), (1, signal.SIGKILL)]:',
        '    try:',
        '        os.kill(pid, sig)',
        '        sent[f"{pid}:{sig}"] = "sent"',
        '    except PermissionError:',
        '        sent[f"{pid}:{sig}"] = "EPERM"',
        'print(json.dumps({"me": list(os.getresuid()), "supervisor": ids(supervisor), "init": ids(1), "sent": sent}))',
      ].join('\n'),
    );
    const out = JSON.parse(body.stdout);
    expect(out.me).toEqual([10001, 10001, 10001]);
    expect(out.supervisor).toEqual([10002, 10001, 10002]);
    expect(out.init[0]).toBe(0);
    expect(Object.values(out.sent)).toEqual(['EPERM', 'EPERM', 'EPERM']);
  });

  it('should keep the session and its variables when user code kills every process it can', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    await run(api, session.id, 'kept = "still here"\nimport subprocess\nchild = subprocess.Popen(["sleep", "300"])');
    const killed = await run(api, session.id, 'import os, signal\nos.kill(-1, signal.SIGKILL)\nprint("survived")');
    expect(killed.stdout).toBe('survived\n');
    const next = await run(api, session.id, 'print(kept, child.wait())');
    expect(next).toMatchObject({ stateLost: false, stdout: 'still here -9\n' });
  });
});
