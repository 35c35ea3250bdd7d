import { fakeSessions, hostWithFakes, sessionSpec } from '../session-host.spec-helper.js';
import { IdleReaper } from './idle-reaper.js';

describe(IdleReaper.name, () => {
  it('should end hosted sessions idle for the timeout and destroy their sandboxes, not busy ones', async () => {
    const sessions = fakeSessions([{ id: 'ses_1' }, { id: 'ses_2', threadId: 'thr_2' }]);
    const { reaper: sut, lifecycle, registry, runtime } = hostWithFakes({ sessions, env: { SESSION_IDLE_TIMEOUT_MS: '60000' } });
    await lifecycle.start(sessionSpec());
    await lifecycle.start(sessionSpec({ sessionId: 'ses_2', threadId: 'thr_2' }));
    registry.get('ses_2')!.busy = true;
    const { ended: reaped } = await sut.reap(Date.now() + 61_000);
    expect(reaped).toContain('ses_1');
    expect(reaped).not.toContain('ses_2');
    expect(runtime.created[0]!.alive).toBe(false);
    expect(sessions.ended).toContain('ses_1');
    expect(registry.get('ses_1')).toBeUndefined();
  });

  it('should end sessions placed on this worker that it no longer hosts once they are idle', async () => {
    const lastUsedAt = new Date(Date.now() - 120_000);
    const sessions = fakeSessions([{ id: 'ses_9', lastUsedAt }]);
    const { reaper: sut } = hostWithFakes({ sessions, env: { SESSION_IDLE_TIMEOUT_MS: '60000' } });
    expect(await sut.reap()).toEqual({ ended: ['ses_9'], hibernated: [] });
  });
});
