import { fakeSessions, sessionSpec } from '../session-host.spec-helper.js';
import { HostedSessionRegistry } from './hosted-session.registry.js';

describe(HostedSessionRegistry.name, () => {
  it('should look a session up once and keep hosting it without asking again', async () => {
    const sessions = fakeSessions();
    let lookups = 0;
    const findById = sessions.findById;
    sessions.findById = async (...args) => (lookups++, findById(...args));
    const sut = new HostedSessionRegistry(sessions);
    const [a, b] = await Promise.all([sut.acquire(sessionSpec()), sut.acquire(sessionSpec())]);
    expect(a).toBe(b);
    await sut.acquire(sessionSpec());
    expect(lookups).toBe(2);
    expect(sut.size).toBe(1);
  });

  it('should refuse a session the database does not know or that has ended, with its typed error', async () => {
    const sut = new HostedSessionRegistry(fakeSessions([{ id: 'ses_old', status: 'ended' }]));
    await expect(sut.acquire(sessionSpec({ sessionId: 'ses_none' }))).rejects.toMatchObject({ code: 'SESSION_NOT_FOUND' });
    await expect(sut.acquire(sessionSpec({ sessionId: 'ses_old' }))).rejects.toMatchObject({ code: 'SESSION_ENDED' });
    expect(sut.size).toBe(0);
  });

  it('should tell the first run that state was lost when the session had a container elsewhere', async () => {
    const sut = new HostedSessionRegistry(fakeSessions([{ containerId: 'abc' }]));
    expect((await sut.acquire(sessionSpec())).stateLostPending).toBe(true);
  });

  it('should run the tasks of one session in order, and keep going after a failed one', async () => {
    const sut = new HostedSessionRegistry(fakeSessions());
    const hosted = await sut.acquire(sessionSpec());
    const order: string[] = [];
    const slow = sut.serialize(hosted, async () => {
      await new Promise((resolve) => setTimeout(resolve, 20));
      order.push('slow');
    });
    const failing = sut.serialize(hosted, async () => {
      order.push('failing');
      throw new Error('boom');
    });
    const last = sut.serialize(hosted, async () => order.push('last'));
    await Promise.all([slow, failing.catch(() => undefined), last]);
    expect(order).toEqual(['slow', 'failing', 'last']);
    expect(hosted.busy).toBe(false);
  });

  it('should know that a removed entry is no longer current', async () => {
    const sut = new HostedSessionRegistry(fakeSessions());
    const hosted = await sut.acquire(sessionSpec());
    expect(sut.isCurrent(hosted)).toBe(true);
    expect(sut.remove('ses_1')).toBe(hosted);
    expect(sut.isCurrent(hosted)).toBe(false);
    expect(await sut.acquire(sessionSpec())).not.toBe(hosted);
  });
});
