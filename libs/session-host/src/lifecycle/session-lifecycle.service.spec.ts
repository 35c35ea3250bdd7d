import { hostWithFakes, sessionSpec } from '../session-host.spec-helper.js';
import { SessionLifecycle } from './session-lifecycle.service.js';

describe(SessionLifecycle.name, () => {
  const scope = { tenantId: 'ten_1', threadId: 'thr_1' };

  it('should start a session with its container up and the thread files in it', async () => {
    const { lifecycle: sut, runtime, files } = hostWithFakes();
    await files.vfs.write(scope, '/notes.txt', 'hi');
    const started = await sut.start(sessionSpec());
    expect(started).toEqual({ sessionId: 'ses_1', containerId: runtime.created[0]!.id });
    expect(runtime.created[0]!.session.get('/notes.txt')?.toString()).toBe('hi');
  });

  it('should answer SANDBOX_UNAVAILABLE when the container cannot be created', async () => {
    const { lifecycle: sut, runtime } = hostWithFakes();
    runtime.create = async () => {
      throw new Error('no such image');
    };
    await expect(sut.start(sessionSpec())).rejects.toMatchObject({ code: 'SANDBOX_UNAVAILABLE', status: 503 });
  });

  it('should refuse to stage into a session that was stopped, with SESSION_ENDED', async () => {
    const { lifecycle: sut, registry } = hostWithFakes();
    await sut.start(sessionSpec());
    const hosted = registry.get('ses_1')!;
    // A stop lands while the stage job waits behind a run.
    let release!: () => void;
    const blocker = registry.serialize(hosted, () => new Promise<void>((resolve) => (release = resolve)));
    const staging = sut.stageDataset({ session: sessionSpec({ datasets: [{ name: 'x', mode: 'staged' }] }), name: 'x' });
    await sut.stop('ses_1');
    release();
    await blocker;
    await expect(staging).rejects.toMatchObject({ code: 'SESSION_ENDED' });
  });

  it('should destroy every sandbox and flush activity on shutdown', async () => {
    const { lifecycle: sut, runtime, registry, activity, sessions } = hostWithFakes();
    await sut.start(sessionSpec());
    activity.mark('ses_1');
    await sut.shutdown();
    expect(runtime.created[0]!.alive).toBe(false);
    expect(registry.size).toBe(0);
    expect(sessions.touched).toEqual([['ses_1']]);
  });
});
