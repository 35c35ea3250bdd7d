import { hostWithFakes, sessionSpec } from '../session-host.spec-helper.js';
import { SandboxProvisioner } from './sandbox-provisioner.js';

describe(SandboxProvisioner.name, () => {
  it('should create one sandbox however many jobs ask at once, and record its container', async () => {
    const { provisioner: sut, registry, runtime, sessions } = hostWithFakes();
    const hosted = await registry.acquire(sessionSpec());
    const [a, b] = await Promise.all([sut.ensure(hosted), sut.ensure(hosted)]);
    expect(a).toBe(b);
    expect(runtime.created).toHaveLength(1);
    expect(sessions.rows.get('ses_1')!.containerId).toBe(a.id);
    expect(await sut.ensure(hosted)).toBe(a);
  });

  it('should replace a dead sandbox in the background and flag the lost state', async () => {
    const { provisioner: sut, registry, runtime } = hostWithFakes();
    const hosted = await registry.acquire(sessionSpec());
    const first = await sut.ensure(hosted);
    await sut.replaceDead(hosted, first);
    expect(first.alive).toBe(false);
    expect(hosted.stateLostPending).toBe(true);
    const next = await sut.ensure(hosted);
    expect(next).not.toBe(first);
    expect(runtime.created).toHaveLength(2);
  });

  it('should destroy a sandbox that came up after its session was stopped', async () => {
    const { provisioner: sut, registry, runtime } = hostWithFakes();
    const hosted = await registry.acquire(sessionSpec());
    registry.remove('ses_1');
    await expect(sut.ensure(hosted)).rejects.toMatchObject({ code: 'SESSION_ENDED' });
    expect(runtime.created[0]!.alive).toBe(false);
  });

  it('should free the bind folder of a bind-storage session with its sandbox', async () => {
    const { provisioner: sut, registry, runtime } = hostWithFakes();
    const hosted = await registry.acquire(sessionSpec({ storage: 'bind' }));
    const sandbox = await sut.ensure(hosted);
    await sut.release(hosted);
    expect(sandbox.alive).toBe(false);
    expect(runtime.released).toEqual(['ses_1']);
  });
});
