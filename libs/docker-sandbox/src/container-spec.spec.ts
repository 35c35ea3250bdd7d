import { makeLimits } from '../../../test/factories/limits.factory.js';
import { sandboxContainerOptions, SANDBOX_UID, SUPERVISOR_UID } from './container-spec.js';
import { DENIED_SYSCALLS, SANDBOX_SECCOMP_PROFILE } from './seccomp/sandbox-seccomp.profile.js';

const spec = { sessionId: 'ses_1', tenantId: 'ten_1', threadId: 'thr_1', workerId: 'w1', limits: makeLimits() };
const profile = JSON.stringify(SANDBOX_SECCOMP_PROFILE);

describe(sandboxContainerOptions.name, () => {
  it('should start as root with only the capabilities that setting the two users takes', () => {
    const sut = sandboxContainerOptions(spec, 'img', { volume: 'v' }, { seccompProfileJson: profile });
    expect(sut.User).toBe('0:0');
    expect(sut.HostConfig!.CapDrop).toEqual(['ALL']);
    expect(sut.HostConfig!.CapAdd).toEqual(['SETUID', 'SETGID']);
    expect(sut.Env).toEqual(expect.arrayContaining([`DRYDOCK_SANDBOX_UID=${SANDBOX_UID}`, `DRYDOCK_SUPERVISOR_UID=${SUPERVISOR_UID}`]));
  });

  it('should apply the seccomp profile and no-new-privileges, and the runtime only when named', () => {
    const plain = sandboxContainerOptions(spec, 'img', { volume: 'v' }, { seccompProfileJson: profile });
    expect(plain.HostConfig!.SecurityOpt).toEqual(['no-new-privileges:true', `seccomp=${profile}`]);
    expect(plain.HostConfig).not.toHaveProperty('Runtime');
    const gvisor = sandboxContainerOptions(spec, 'img', { volume: 'v' }, { seccompProfileJson: profile, runtime: 'runsc' });
    expect(gvisor.HostConfig!.Runtime).toBe('runsc');
  });

  it('should mask the host kernel configuration and boot id besides Docker\'s own paths, and mount /tmp noexec', () => {
    const sut = sandboxContainerOptions(spec, 'img', { volume: 'v' }, { seccompProfileJson: profile });
    expect(sut.HostConfig!.MaskedPaths).toEqual(expect.arrayContaining(['/proc/config.gz', '/proc/sys/kernel/random/boot_id', '/proc/kcore', '/sys/firmware']));
    expect(sut.HostConfig!.Tmpfs!['/tmp']!.split(',')).toEqual(expect.arrayContaining(['noexec', 'nosuid', 'nodev']));
  });

  it('should give only a sandbox with a network policy and a socket channel the proxy, pip settings and a packages tmpfs', () => {
    const plain = sandboxContainerOptions(spec, 'img', { volume: 'v' }, { seccompProfileJson: profile }, {}, '/chan');
    expect(plain.Env!.filter((v) => /PROXY|PIP_|PYTHONUSERBASE|EGRESS/i.test(v))).toEqual([]);
    expect(Object.keys(plain.HostConfig!.Tmpfs!)).toEqual(['/tmp']);
    const networked = { ...spec, network: { allow: ['pypi.org'] } };
    const sut = sandboxContainerOptions(networked, 'img', { volume: 'v' }, { seccompProfileJson: profile }, {}, '/chan');
    expect(sut.HostConfig!.NetworkMode).toBe('none');
    expect(sut.Env).toEqual(expect.arrayContaining(['DRYDOCK_EGRESS_SOCKET=/run/drydock/egress.sock', 'HTTPS_PROXY=http://127.0.0.1:3128', 'PYTHONUSERBASE=/opt/packages', 'PIP_USER=1']));
    expect(sut.Env!.filter((v) => v.startsWith('PATH='))).toEqual(['PATH=/opt/packages/bin:/usr/local/bin:/usr/bin:/bin']);
    expect(sut.HostConfig!.Tmpfs!['/opt/packages']!.split(',')).toEqual(expect.arrayContaining(['nosuid', 'nodev', `uid=${SANDBOX_UID}`]));
    // Without the socket channel there is nowhere to put the proxy's socket: nothing is set.
    const attached = sandboxContainerOptions(networked, 'img', { volume: 'v' }, { seccompProfileJson: profile });
    expect(attached.Env!.some((v) => v.startsWith('HTTPS_PROXY='))).toBe(false);
  });

  it('should hand the zygote its preload list only when there is one', () => {
    const plain = sandboxContainerOptions(spec, 'img', { volume: 'v' }, { seccompProfileJson: profile });
    expect(plain.Env!.some((v) => v.startsWith('DRYDOCK_ZYGOTE_PRELOAD='))).toBe(false);
    const tuned = sandboxContainerOptions(spec, 'img', { volume: 'v' }, { seccompProfileJson: profile }, { preloadModules: ['numpy', 'pandas'] });
    expect(tuned.Env).toContain('DRYDOCK_ZYGOTE_PRELOAD=numpy,pandas');
  });
});

describe('SANDBOX_SECCOMP_PROFILE', () => {
  it('should deny by default and never allow what it denies on purpose', () => {
    expect(SANDBOX_SECCOMP_PROFILE.defaultAction).toBe('SCMP_ACT_ERRNO');
    const allowed = new Set<string>(
      SANDBOX_SECCOMP_PROFILE.syscalls.filter((rule) => rule.action === 'SCMP_ACT_ALLOW').flatMap((rule) => [...rule.names]),
    );
    for (const name of Object.keys(DENIED_SYSCALLS)) expect([name, allowed.has(name)]).toEqual([name, false]);
    for (const name of ['ptrace', 'process_vm_readv', 'process_vm_writev', 'personality', 'keyctl', 'bpf', 'userfaultfd', 'perf_event_open', 'io_uring_setup']) {
      expect(DENIED_SYSCALLS).toHaveProperty(name);
    }
  });

  it('should admit the native ABIs only, so no 32-bit call (socketcall) gets past the argument checks', () => {
    expect(SANDBOX_SECCOMP_PROFILE.archMap).toEqual([
      { architecture: 'SCMP_ARCH_X86_64', subArchitectures: [] },
      { architecture: 'SCMP_ARCH_AARCH64', subArchitectures: [] },
    ]);
    expect(DENIED_SYSCALLS).toHaveProperty('socketcall');
  });

  it('should allow socket() in every family but AF_VSOCK, and clone() without namespace flags only', () => {
    const rulesFor = (name: string) => SANDBOX_SECCOMP_PROFILE.syscalls.filter((rule) => (rule.names as readonly string[]).includes(name));
    expect(rulesFor('socket')).toEqual([{ names: ['socket'], action: 'SCMP_ACT_ALLOW', args: [{ index: 0, value: 40, valueTwo: 0, op: 'SCMP_CMP_NE' }] }]);
    expect(rulesFor('clone')).toEqual([expect.objectContaining({ args: [{ index: 0, value: 0x7e020000, valueTwo: 0, op: 'SCMP_CMP_MASKED_EQ' }] })]);
    expect(rulesFor('clone3')).toEqual([{ names: ['clone3'], action: 'SCMP_ACT_ERRNO', errnoRet: 38 }]);
  });
});
