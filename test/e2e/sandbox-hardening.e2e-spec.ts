import { createHash } from 'node:crypto';
import { readFileSync } from 'node:fs';
import { DENIED_SYSCALLS, SANDBOX_SECCOMP_PROFILE } from '@drydock/docker-sandbox';
import Docker from 'dockerode';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { E2E_TIER, startPlatform, type Platform } from './support/platform.js';

// Under gVisor (the e2e-gvisor project) the denied calls are the Sentry's to answer: a
// refusal, or for these, served within the sandbox and harmless with zero arguments:
// ptrace(PTRACE_TRACEME) of the probe's own parent, unshare(0), set_mempolicy(0).
const SERVED_IN_GVISOR = new Set(['ptrace', 'unshare', 'set_mempolicy']);
// A failed call: an errno, or the seccomp filter's SIGSYS.
const isRefusal = (outcome: string) => /^E[A-Z]+$/.test(outcome) || outcome === 'SIGSYS';

// User code cannot tamper with the sandbox's own processes (decision 007): it runs as
// another user than the supervisor, under our seccomp profile. Tried as a hostile user
// would, from inside an execution.
describe('Sandbox hardening', () => {
  let platform: Platform;

  beforeAll(async () => {
    // The socket channel, as scripts/start.sh and scripts/test.sh configure it.
    platform = await startPlatform({ SANDBOX_CHANNEL_DIR: process.env.SANDBOX_CHANNEL_DIR || join(tmpdir(), 'drydock-test-channels') });
  });

  afterAll(async () => {
    await platform?.close();
  });

  const run = async (api: Awaited<ReturnType<Platform['newTenant']>>, sessionId: string, code: string) => {
    const res = await api.execute(sessionId, code);
    expect(res.status).toBe(200);
    // The whole record on a failure: its error says why.
    expect({ status: res.body.status, error: res.body.error, stderr: res.body.stderr }).toMatchObject({ status: 'ok' });
    return res.body;
  };

  // Every other process of the container, as user code sees them in /proc.
  const PROCESSES = [
    'import os',
    'def uids(pid):',
    '    return [int(x) for x in [l for l in open(f"/proc/{pid}/status") if l.startswith("Uid:")][0].split()[1:4]]',
    'def capabilities(pid):',
    '    return [l.split()[1] for l in open(f"/proc/{pid}/status") if l.startswith(("CapPrm:", "CapEff:"))]',
    'def command(pid):',
    '    return " ".join(a.decode() for a in open(f"/proc/{pid}/cmdline", "rb").read().split(b"\\0") if a)',
    'processes = {}',
    'for name in os.listdir("/proc"):',
    '    if name.isdigit() and int(name) != os.getpid():',
    '        try:',
    '            processes[int(name)] = {"uids": uids(name), "command": command(name), "caps": capabilities(name)}',
    '        except OSError:',
    '            pass  # gone meanwhile',
  ];

  it('should run every container under our seccomp profile', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const info = await platform.containerOf(session.id);
    const seccomp = info.HostConfig.SecurityOpt!.find((opt: string) => opt.startsWith('seccomp='))!;
    expect(JSON.parse(seccomp.slice('seccomp='.length))).toEqual(JSON.parse(JSON.stringify(SANDBOX_SECCOMP_PROFILE)));
    expect(info.HostConfig.SecurityOpt).toContain('no-new-privileges:true');
    // No runtime named (SANDBOX_RUNTIME unset): Docker's default; the gvisor tier's is
    // SANDBOX_GVISOR_RUNTIME (which serves the calls itself: docs/security.md).
    expect(info.HostConfig.Runtime).toBe(E2E_TIER === 'gvisor' ? 'runsc' : 'runc');
  });

  it('should fail ptrace(PTRACE_ATTACH) on every other process of the container, and the denied calls', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const body = await run(
      api,
      session.id,
      [
        ...PROCESSES,
        'import ctypes, errno, json, socket',
        'libc = ctypes.CDLL(None, use_errno=True)',
        'attached = {}',
        'for pid in sorted(processes):',
        '    result = libc.ptrace(16, pid, None, None)  # PTRACE_ATTACH',
        '    attached[pid] = "attached" if result == 0 else errno.errorcode.get(ctypes.get_errno())',
        'syscall = libc.syscall',
        'def denied(number, *args):',
        '    return "ok" if syscall(number, *args) != -1 else errno.errorcode.get(ctypes.get_errno(), "?")',
        // x86_64 numbers: process_vm_readv 310, personality 135, keyctl 250, bpf 321,
        // userfaultfd 323, perf_event_open 298, io_uring_setup 425, unshare 272.
        'calls = {name: denied(n, 0, 0, 0, 0, 0) for name, n in [("process_vm_readv", 310), ("personality", 135), ("keyctl", 250),',
        '         ("bpf", 321), ("userfaultfd", 323), ("perf_event_open", 298), ("io_uring_setup", 425), ("unshare", 272)]}',
        'def opens(family):',
        '    try:',
        '        socket.socket(family, socket.SOCK_STREAM).close()',
        '        return "opened"',
        '    except OSError as exc:',
        '        return errno.errorcode.get(exc.errno)',
        'sockets = {"vsock": opens(socket.AF_VSOCK), "unix": opens(socket.AF_UNIX)}',
        'print(json.dumps({"attached": attached, "calls": calls, "commands": [p["command"] for p in processes.values()], "sockets": sockets}))',
      ].join('\n'),
    );
    const out = JSON.parse(body.stdout) as { attached: Record<string, string>; calls: Record<string, string>; commands: string[]; sockets: Record<string, string> };
    // tini (pid 1) and the supervisor at least were tried.
    expect(out.attached).toHaveProperty('1');
    // The supervisor, on the platform's runtime through its own loader.
    expect(out.commands).toContainEqual(expect.stringContaining('/opt/drydock/runtime/bin/python3 -I -S -u /opt/drydock/repl/supervisor.py'));
    expect(new Set(Object.values(out.attached))).toEqual(new Set(['EPERM']));
    // The profile's EPERM; under gVisor the Sentry's own refusal (not implemented, no
    // capability), except unshare(0), which it serves as a no-op.
    if (E2E_TIER === 'gvisor') {
      for (const [name, outcome] of Object.entries(out.calls)) expect([name, isRefusal(outcome) || SERVED_IN_GVISOR.has(name)]).toEqual([name, true]);
    } else {
      expect(out.calls).toEqual(Object.fromEntries(Object.keys(out.calls).map((name) => [name, 'EPERM'])));
    }
    for (const name of Object.keys(out.calls)) expect(DENIED_SYSCALLS).toHaveProperty(name);
    // gVisor has no vsock family at all.
    expect(out.sockets).toEqual({ vsock: E2E_TIER === 'gvisor' ? 'EAFNOSUPPORT' : 'EPERM', unix: 'opened' });
  });

  // Every denied call through each ABI a x86_64 kernel has: native, i386 (`int 0x80`, with
  // its own numbers and socketcall, whose arguments seccomp cannot read) and x32 (native
  // instructions, numbers with bit 30 set). Only the native one is admitted: a 32-bit
  // call fails whatever it is, an allowed one (getpid) too. Each call runs in a child
  // (a foreign-ABI call may be answered by a signal).
  it('should refuse every denied call through the native ABI, and every call at all through the 32-bit ones', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const header = (name: string, pattern: RegExp) => {
      const numbers: Record<string, number> = {};
      for (const [, call, nr] of readFileSync(`/usr/include/x86_64-linux-gnu/asm/${name}`, 'utf8').matchAll(pattern)) numbers[call!] = Number(nr);
      return numbers;
    };
    const x64 = header('unistd_64.h', /^#define __NR_(\w+) (\d+)$/gm);
    const i386 = header('unistd_32.h', /^#define __NR_(\w+) (\d+)$/gm);
    const x32 = header('unistd_x32.h', /^#define __NR_(\w+) \(__X32_SYSCALL_BIT \+ (\d+)\)$/gm);
    const denied = Object.keys(DENIED_SYSCALLS);
    const pick = (table: Record<string, number>) => Object.fromEntries(denied.filter((n) => n in table).map((n) => [n, table[n]]));
    const body = await run(
      api,
      session.id,
      [
        'import ctypes, errno, json, mmap, os, signal, struct',
        `X64, I386, X32 = ${JSON.stringify(pick(x64))}, ${JSON.stringify(pick(i386))}, ${JSON.stringify(pick(x32))}`,
        'libc = ctypes.CDLL(None, use_errno=True)',
        // int 0x80 from 64-bit code: eax = number, ebx..edi = arguments; callee-saved
        // registers kept. Below 4 GiB (MAP_32BIT), where 32-bit pointers reach.
        'page = mmap.mmap(-1, 4096, flags=mmap.MAP_PRIVATE | mmap.MAP_ANONYMOUS | 0x40, prot=mmap.PROT_READ | mmap.PROT_WRITE | mmap.PROT_EXEC)',
        'page.write(bytes.fromhex("53 55 4154 4155 4156 4157 89f8 89f3 4189ca 89d1 4489d2 4489c6 4489cf cd80 415f 415e 415d 415c 5d 5b c3".replace(" ", "")))',
        'base = ctypes.addressof(ctypes.c_char.from_buffer(page))',
        'assert base < 2**32',
        'int80 = ctypes.CFUNCTYPE(ctypes.c_int, *[ctypes.c_uint32] * 6)(base)',
        'args = base + 2048',
        'ctypes.memmove(args, struct.pack("<III", 40, 1, 0), 12)  # socket(AF_VSOCK, SOCK_STREAM, 0)',
        'def in_child(call):',
        '    r, w = os.pipe()',
        '    pid = os.fork()',
        '    if pid == 0:',
        '        os.close(r)',
        '        try:',
        '            os.write(w, str(call()).encode())',
        '        finally:',
        '            os._exit(0)',
        '    os.close(w)',
        '    out = os.read(r, 64)',
        '    os.close(r)',
        '    status = os.waitpid(pid, 0)[1]',
        '    if os.WIFSIGNALED(status):',
        '        return signal.Signals(os.WTERMSIG(status)).name',
        '    result = int(out)',
        '    return "ok" if result >= 0 else errno.errorcode.get(-result, str(result))',
        'def native(nr, *a):',
        '    def call():',
        '        result = libc.syscall(nr, *(list(a) + [0] * 5)[:5])',
        '        return result if result >= 0 else -ctypes.get_errno()',
        '    return in_child(call)',
        'def old(nr, *a):',
        '    return in_child(lambda: int80(nr, *(list(a) + [0] * 5)[:5]))',
        'print(json.dumps({',
        '    "x64": {name: native(nr) for name, nr in X64.items()},',
        '    "i386": {name: old(nr) for name, nr in I386.items()},',
        '    "x32": {name: native(nr | 0x40000000) for name, nr in X32.items()},',
        '    "allowed": {"x64 getpid": native(39), "i386 getpid": old(20), "x32 getpid": native(39 | 0x40000000)},',
        '    "vsock": {"i386 socketcall": old(102, 1, args), "i386 socket": old(359, 40, 1, 0)},',
        '}))',
      ].join('\n'),
    );
    const out = JSON.parse(body.stdout) as Record<'x64' | 'i386' | 'x32' | 'allowed' | 'vsock', Record<string, string>>;
    // Every denied call of each table was tried (the tables name most of them).
    expect(Object.keys(out.x64).length).toBeGreaterThan(50);
    expect(Object.keys(out.i386).length).toBeGreaterThan(50);
    expect(Object.keys(out.x32).length).toBeGreaterThan(50);
    if (E2E_TIER === 'gvisor') {
      // gVisor's Sentry serves them (the profile is not applied inside it): each fails,
      // on a missing capability or as not implemented, except the few it serves within
      // the sandbox alone, harmless with these arguments (docs/security.md).
      const served = Object.entries(out.x64).filter(([, outcome]) => outcome === 'ok').map(([name]) => name);
      expect(served.filter((name) => !SERVED_IN_GVISOR.has(name))).toEqual([]);
      for (const [name, outcome] of Object.entries(out.x64)) if (outcome !== 'ok') expect([name, isRefusal(outcome)]).toEqual([name, true]);
    } else {
      expect(out.x64).toEqual(Object.fromEntries(Object.keys(out.x64).map((name) => [name, 'EPERM'])));
    }
    const refusals = new Set(['SIGSYS', 'ENOSYS', 'EPERM']);
    if (E2E_TIER === 'gvisor') {
      // gVisor has no 32-bit ABI: an `int 0x80` from a 64-bit task is the native call of
      // that number, served by the Sentry like any other (i386 getpid, 20, is x86_64's
      // writev: EBADF on these arguments), so there is no second table to slip past a
      // filter; x32 numbers are not implemented (docs/security.md, "The gvisor tier").
      expect(out.allowed).toMatchObject({ 'x64 getpid': 'ok', 'i386 getpid': 'EBADF', 'x32 getpid': 'ENOSYS' });
      expect(Object.entries(out.x32).filter(([, outcome]) => outcome !== 'ENOSYS')).toEqual([]);
    } else {
      // What the filter answers a foreign ABI with, the same for every call.
      const foreign = out.allowed['i386 getpid'];
      expect(['SIGSYS', 'ENOSYS', 'EPERM']).toContain(foreign);
      expect(out.i386).toEqual(Object.fromEntries(Object.keys(out.i386).map((name) => [name, foreign])));
      // x32 numbers fail in the filter, or in a kernel that does not run x32 programs.
      expect(Object.entries(out.x32).filter(([, outcome]) => !refusals.has(outcome))).toEqual([]);
      expect(out.allowed).toMatchObject({ 'x64 getpid': 'ok', 'i386 getpid': foreign });
      expect(refusals).toContain(out.allowed['x32 getpid']);
      expect(out.vsock).toEqual({ 'i386 socketcall': foreign, 'i386 socket': foreign });
    }
    expect((await run(api, session.id, '1 + 1')).stateLost).toBe(false);
  });

  it('should leave no setuid or setgid program, mask the host kernel configuration and boot id, and allow exec in /session only', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const info = await platform.containerOf(session.id);
    expect(info.HostConfig.MaskedPaths).toEqual(expect.arrayContaining(['/proc/config.gz', '/proc/sys/kernel/random/boot_id', '/proc/kcore']));
    const body = await run(
      api,
      session.id,
      [
        'import json, os, stat, subprocess',
        'special = []',
        'for top in ("/usr", "/bin", "/sbin", "/etc", "/opt", "/var", "/lib"):',
        '    for folder, _dirs, files in os.walk(top):',
        '        for name in files:',
        '            try:',
        '                mode = os.lstat(os.path.join(folder, name)).st_mode',
        '            except OSError:',
        '                continue',
        '            if stat.S_ISREG(mode) and mode & (stat.S_ISUID | stat.S_ISGID):',
        '                special.append(os.path.join(folder, name))',
        'def content(path):',
        '    try:',
        '        return open(path, "rb").read().decode("latin-1")',
        '    except OSError as e:',
        '        return type(e).__name__',
        'def runs(folder):',
        '    path = os.path.join(folder, "probe.sh")',
        '    with open(path, "w") as f:',
        '        f.write("#!/bin/sh\\necho ran\\n")',
        '    os.chmod(path, 0o755)',
        '    try:',
        '        return subprocess.run([path], capture_output=True, text=True).stdout.strip()',
        '    except OSError as e:',
        '        return type(e).__name__',
        'print(json.dumps({"special": special, "config": content("/proc/config.gz"), "boot_id": content("/proc/sys/kernel/random/boot_id"),',
        '                  "session": runs("/session"), "tmp": runs("/tmp")}))',
      ].join('\n'),
    );
    const out = JSON.parse(body.stdout);
    // Masked (empty) under runc; under gVisor the Sentry's /proc has no such file at all.
    const hidden = E2E_TIER === 'gvisor' ? 'FileNotFoundError' : '';
    expect(out).toEqual({ special: [], config: hidden, boot_id: hidden, session: 'ran', tmp: 'PermissionError' });
    // What the platform itself reads there is unchanged: the host's boot id is the host's.
    expect(readFileSync('/proc/sys/kernel/random/boot_id', 'utf8').trim()).toMatch(/^[0-9a-f-]{36}$/);
  });

  it('should run user code as another user than the supervisor, which, like init, user code cannot signal', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const body = await run(
      api,
      session.id,
      [
        ...PROCESSES,
        'import json, signal',
        // (tini's command line ends with the supervisor's too.)
        'supervisor = [pid for pid, p in processes.items() if p["command"].startswith("/opt/drydock/runtime/sys/ld.so ") and p["command"].endswith(" -u /opt/drydock/repl/supervisor.py")]',
        // Everything that is not user code: init, the supervisor and what it runs under
        // its own user (the zygote).
        'theirs = sorted(pid for pid, p in processes.items() if p["uids"][0] != os.getuid())',
        'sent = {}',
        'for pid in theirs:',
        '    for sig in (signal.SIGTERM, signal.SIGSTOP, signal.SIGKILL):',
        '        try:',
        '            os.kill(pid, sig)',
        '            sent[f"{pid}:{sig.name}"] = "sent"',
        '        except PermissionError:',
        '            sent[f"{pid}:{sig.name}"] = "EPERM"',
        'print(json.dumps({"me": list(os.getresuid()), "supervisor": [processes[p]["uids"] for p in supervisor],',
        '                  "caps": {p: processes[p]["caps"] for p in theirs}, "init": processes[1]["uids"], "theirs": theirs, "sent": sent}))',
      ].join('\n'),
    );
    const out = JSON.parse(body.stdout);
    expect(out.me).toEqual([10001, 10001, 10001]);
    expect(out.supervisor).toEqual([[10002, 10001, 10002]]);
    // No capability left in anything but init (which keeps SETUID and SETGID, unused).
    for (const [pid, caps] of Object.entries(out.caps)) {
      expect([pid, caps]).toEqual([pid, pid === '1' ? ['00000000000000c0', '00000000000000c0'] : ['0000000000000000', '0000000000000000']]);
    }
    expect(out.init[0]).toBe(0);
    expect(out.theirs).toEqual(expect.arrayContaining([1]));
    expect(out.theirs.length).toBeGreaterThanOrEqual(2);
    expect(Object.keys(out.sent)).toHaveLength(3 * out.theirs.length);
    expect(new Set(Object.values(out.sent))).toEqual(new Set(['EPERM']));
    // Still served by the same supervisor.
    expect((await run(api, session.id, '1 + 1')).stateLost).toBe(false);
  });

  it('should reach the supervisor over a socket in a folder user code cannot enter (decision 010)', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const info = await platform.containerOf(session.id);
    const channel = info.Mounts.find((m: { Destination: string }) => m.Destination === '/run/drydock');
    expect(channel).toMatchObject({ Type: 'bind', RW: true });
    const body = await run(
      api,
      session.id,
      [
        'import json, os, socket',
        'tries = {}',
        'st = os.stat("/run/drydock")',
        'tries["folder"] = [st.st_uid, oct(st.st_mode & 0o777)]',
        's = socket.socket(socket.AF_UNIX)',
        'for name, op in (("connect", lambda: s.connect("/run/drydock/channel.sock")), ("list", lambda: os.listdir("/run/drydock")),',
        '                 ("unlink", lambda: os.unlink("/run/drydock/channel.sock")), ("create", lambda: open("/run/drydock/x", "w"))):',
        '    try:',
        '        op(); tries[name] = "ok"',
        '    except OSError as e:',
        '        tries[name] = type(e).__name__',
        'print(json.dumps(tries))',
      ].join('\n'),
    );
    expect(JSON.parse(body.stdout)).toEqual({
      folder: [10002, '0o700'],
      connect: 'PermissionError',
      list: 'PermissionError',
      unlink: 'PermissionError',
      create: 'PermissionError',
    });
    // The channel works on after the attempts.
    expect((await api.execute(session.id, 'print(2)')).body.stdout).toBe('2\n');
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

// SANDBOX_RUNTIME: the worker passes the operator's runtime to Docker (an unknown one
// stops it at boot: docker-sandbox.runtime.spec.ts).
describe('Sandbox hardening under an operator-named runtime', () => {
  let platform: Platform;
  let runtime: string;

  beforeAll(async () => {
    const info = (await new Docker({ socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock' }).info()) as {
      Runtimes?: Record<string, unknown>;
      DefaultRuntime: string;
    };
    // Any runtime the daemon knows besides its default (e.g. io.containerd.runc.v2).
    runtime = Object.keys(info.Runtimes ?? {}).find((name) => name !== info.DefaultRuntime) ?? info.DefaultRuntime;
    // The runc tier whatever the project (e2e-gvisor makes gvisor the default).
    platform = await startPlatform({ SANDBOX_RUNTIME: runtime, SANDBOX_DEFAULT_TIER: 'runc' });
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should create sessions under that runtime, which serve executions', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    expect((await platform.containerOf(session.id)).HostConfig.Runtime).toBe(runtime);
    const res = await api.execute(session.id, 'import os\nos.getresuid()');
    expect(res.body).toMatchObject({ status: 'ok', result: { text: '(10001, 10001, 10001)' } });
  });
});

// SANDBOX_CHANNEL_DIR unset (a remote Docker engine): the host channel is the
// container's attached stdin/stdout, through dockerd.
describe('Sandboxes on attached streams', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ SANDBOX_CHANNEL_DIR: '' });
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should serve executions and keep state without a socket folder', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    const info = await platform.containerOf(session.id);
    expect(info.Mounts.map((m: { Destination: string }) => m.Destination)).not.toContain('/run/drydock');
    expect(info.Config.Env).not.toContainEqual(expect.stringMatching(/^DRYDOCK_CHANNEL_SOCKET=/));
    expect((await api.execute(session.id, 'x = 40')).body.status).toBe('ok');
    expect((await api.execute(session.id, 'print(x + 2)')).body).toMatchObject({ status: 'ok', stdout: '42\n' });
  });

  // Files leave the sandbox over the channel (fs-read: a frame, then the raw bytes): on
  // attached streams those bytes pass through dockerd's stdout multiplexing, which must
  // not cost or add a byte. Random bytes include whatever looks like a frame header.
  it('should bring an artifact and a changed thread file out over the attached streams, byte for byte', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession({ threadId: 'attached-files' });
    const size = 3 * 1024 * 1024 + 17;
    const res = await api.execute(
      session.id,
      [
        'import os, hashlib, random',
        `blob = random.Random(7).randbytes(${size})`,
        "os.makedirs('/session/artifacts', exist_ok=True)",
        "open('/session/artifacts/blob.bin', 'wb').write(blob)",
        "os.makedirs('/session/out', exist_ok=True)",
        "open('/session/out/notes.txt', 'w').write('line\\n' * 5000)",
        'hashlib.sha256(blob).hexdigest()',
      ].join('\n'),
    );
    expect(res.status).toBe(200);
    expect(res.body).toMatchObject({ status: 'ok', files: { changed: ['/out/notes.txt'], deleted: [] } });
    const sha = String(res.body.result.text).replaceAll("'", '');
    expect(res.body.artifacts).toHaveLength(1);
    const artifact = res.body.artifacts[0];
    expect(artifact).toMatchObject({ name: 'blob.bin', size, sha256: sha });

    const key = (api as unknown as { key: string }).key;
    const download = await fetch(`${platform.url}/v1/artifacts/${artifact.id}/content`, { headers: { authorization: `Bearer ${key}` } });
    expect(download.status).toBe(200);
    expect(createHash('sha256').update(Buffer.from(await download.arrayBuffer())).digest('hex')).toBe(sha);
    const notes = await api.get(`/v1/threads/attached-files/files/content?path=${encodeURIComponent('/out/notes.txt')}`);
    expect(notes.status).toBe(200);
    expect(notes.body).toBe('line\n'.repeat(5000));
  });
});
