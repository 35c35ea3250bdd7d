import { jest } from '@jest/globals';
import { ConfigError } from '@drydock/core';
import type { SandboxSpec } from '@drydock/execution';
import type Docker from 'dockerode';
import { mkdtemp, readdir, stat, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeConfig } from '../../../test/factories/config.factory.js';
import { makeLimits } from '../../../test/factories/limits.factory.js';
import { DockerSandboxRuntime } from './docker-sandbox.runtime.js';
import { SANDBOX_SECCOMP_PROFILE } from './seccomp/sandbox-seccomp.profile.js';

const spec: SandboxSpec = { sessionId: 'ses_1', tenantId: 'ten_1', threadId: 'thr_1', workerId: 'w1', limits: makeLimits() };

// Only what onModuleInit and the start of create() touch; createContainer stops there.
function fakeDocker(runtimes: string[]) {
  return {
    info: jest.fn(async () => ({ Runtimes: Object.fromEntries(runtimes.map((name) => [name, { path: name }])) })),
    createVolume: jest.fn(async () => ({})),
    getVolume: () => ({ remove: async () => undefined }),
    createContainer: jest.fn(async (_options: Docker.ContainerCreateOptions) => {
      throw new Error('stop here');
    }),
  };
}

function runtimeWith(env: Record<string, string>, docker: ReturnType<typeof fakeDocker>) {
  const sut = new DockerSandboxRuntime(makeConfig(env));
  (sut as unknown as { docker: unknown }).docker = docker;
  return sut;
}

async function createdOptions(sut: DockerSandboxRuntime, docker: ReturnType<typeof fakeDocker>, over: Partial<typeof spec> = {}) {
  docker.createContainer.mockClear();
  await expect(sut.create({ ...spec, ...over })).rejects.toThrow('stop here');
  return docker.createContainer.mock.calls[0][0];
}

describe(DockerSandboxRuntime.name, () => {
  it('should refuse to start when Docker does not know the runtime, naming the variable and what it knows', async () => {
    const docker = fakeDocker(['runc', 'io.containerd.runc.v2']);
    const sut = runtimeWith({ SANDBOX_RUNTIME: 'crun' }, docker);
    const init = sut.onModuleInit();
    await expect(init).rejects.toThrow(ConfigError);
    await expect(init).rejects.toThrow('SANDBOX_RUNTIME: Docker has no runtime "crun" (it has: runc, io.containerd.runc.v2)');
    await expect(runtimeWith({ SANDBOX_GVISOR_RUNTIME: 'runsc' }, docker).onModuleInit()).rejects.toThrow('SANDBOX_GVISOR_RUNTIME: Docker has no runtime "runsc"');
  });

  it('should pass a runtime Docker knows to every container, and none when unset', async () => {
    const docker = fakeDocker(['runc', 'crun', 'runsc']);
    const tiers = runtimeWith({ SANDBOX_RUNTIME: 'crun', SANDBOX_GVISOR_RUNTIME: 'runsc' }, docker);
    await tiers.onModuleInit();
    const runc = (await createdOptions(tiers, docker)).HostConfig!;
    expect(runc.Runtime).toBe('crun');
    expect(runc.Mounts!.find((m) => m.Target === '/session')).toMatchObject({ Type: 'volume' });
    // The gvisor tier: gVisor's runtime, and /session in the sandbox's own memory.
    const gvisor = (await createdOptions(tiers, docker, { tier: 'gvisor' })).HostConfig!;
    expect(gvisor.Runtime).toBe('runsc');
    expect(gvisor.Mounts!.find((m) => m.Target === '/session')).toBeUndefined();
    expect(gvisor.Tmpfs!['/session']).toMatch(/^rw,exec,nosuid,nodev,size=\d+m,/);

    const plainDocker = fakeDocker(['runc']);
    const plain = runtimeWith({}, plainDocker);
    await plain.onModuleInit();
    expect(plainDocker.info).not.toHaveBeenCalled();
    expect((await createdOptions(plain, plainDocker)).HostConfig).not.toHaveProperty('Runtime');
  });

  it('should put the built-in seccomp profile on every container, or the operator file instead', async () => {
    const builtIn = fakeDocker([]);
    const sut = runtimeWith({}, builtIn);
    await sut.onModuleInit();
    expect((await createdOptions(sut, builtIn)).HostConfig!.SecurityOpt).toContain(`seccomp=${JSON.stringify(SANDBOX_SECCOMP_PROFILE)}`);

    const file = join(await mkdtemp(join(tmpdir(), 'seccomp-')), 'profile.json');
    const own = { defaultAction: 'SCMP_ACT_ERRNO', syscalls: [{ names: ['read', 'write'], action: 'SCMP_ACT_ALLOW' }] };
    await writeFile(file, JSON.stringify(own, null, 2));
    const docker = fakeDocker([]);
    const operator = runtimeWith({ SANDBOX_SECCOMP_PROFILE: file }, docker);
    await operator.onModuleInit();
    expect((await createdOptions(operator, docker)).HostConfig!.SecurityOpt).toEqual(['no-new-privileges:true', `seccomp=${JSON.stringify(own)}`]);
  });

  it('should refuse to start when the operator profile cannot be read', async () => {
    const sut = runtimeWith({ SANDBOX_SECCOMP_PROFILE: '/nonexistent/profile.json' }, fakeDocker([]));
    await expect(sut.onModuleInit()).rejects.toThrow(/^SANDBOX_SECCOMP_PROFILE: cannot read \/nonexistent\/profile.json/);
  });

  it('should mount a folder of its own for the socket channel, only the supervisor may enter, and remove it when the start fails', async () => {
    const root = await mkdtemp(join(tmpdir(), 'channels-'));
    const docker = fakeDocker([]);
    let folder: { mode: number; uid: number } | undefined;
    docker.createContainer.mockImplementationOnce(async (options: Docker.ContainerCreateOptions) => {
      const mount = options.HostConfig!.Mounts!.find((m) => m.Target === '/run/drydock')!;
      const info = await stat(mount.Source);
      folder = { mode: info.mode & 0o777, uid: info.uid };
      throw new Error('stop here');
    });
    const sut = runtimeWith({ SANDBOX_CHANNEL_DIR: root }, docker);
    await sut.onModuleInit();
    const options = await createdOptions(sut, docker);
    expect(folder).toEqual({ mode: 0o700, uid: 10002 });
    expect(options.Env).toContain('DRYDOCK_CHANNEL_SOCKET=/run/drydock/channel.sock');
    expect(await readdir(root)).toEqual([]);

    const attachedDocker = fakeDocker([]);
    const attached = runtimeWith({}, attachedDocker);
    const plain = await createdOptions(attached, attachedDocker);
    expect(plain.HostConfig!.Mounts!.map((m) => m.Target)).not.toContain('/run/drydock');
    expect(plain.Env!.some((v) => v.startsWith('DRYDOCK_CHANNEL_SOCKET='))).toBe(false);
  });

  it('should fail a start at once, with the exit code, when the sandbox stops before its channel opens', async () => {
    const root = await mkdtemp(join(tmpdir(), 'channels-'));
    const docker = fakeDocker([]);
    const container = {
      id: 'c1',
      start: jest.fn(async () => undefined),
      inspect: jest.fn(async () => ({ State: { Running: false, ExitCode: 1 } })),
      remove: jest.fn(async () => undefined),
    };
    docker.createContainer.mockImplementationOnce(async () => container as never);
    const sut = runtimeWith({ SANDBOX_CHANNEL_DIR: root }, docker);
    await sut.onModuleInit();
    // Nothing ever listens: without the check this waits for the 30 s ready timeout.
    await expect(sut.create(spec)).rejects.toThrow('the sandbox stopped before its channel opened (exit code 1)');
    expect(container.remove).toHaveBeenCalledWith({ force: true });
    expect(await readdir(root)).toEqual([]);
  });

  it('should refuse to start when SANDBOX_CHANNEL_DIR is too long for a socket path', async () => {
    const sut = runtimeWith({ SANDBOX_CHANNEL_DIR: `/srv/${'x'.repeat(100)}` }, fakeDocker([]));
    await expect(sut.onModuleInit()).rejects.toThrow(/^SANDBOX_CHANNEL_DIR: \/srv\/x+ is too long for a socket path \(at most 77 bytes\)$/);
  });
});
