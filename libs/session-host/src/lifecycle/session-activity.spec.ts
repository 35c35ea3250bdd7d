import { fakeSessions } from '../session-host.spec-helper.js';
import { SessionActivity } from './session-activity.js';

describe(SessionActivity.name, () => {
  it('should write every session used since the last flush in one call, once', async () => {
    const sessions = fakeSessions();
    const sut = new SessionActivity(sessions);
    sut.mark('ses_1');
    sut.mark('ses_2');
    sut.mark('ses_1');
    await sut.flush();
    await sut.flush();
    expect(sessions.touched).toEqual([['ses_1', 'ses_2']]);
  });

  it('should start a new batch when the write fails', async () => {
    const sessions = fakeSessions();
    sessions.touchMany = async () => Promise.reject(new Error('database down'));
    const sut = new SessionActivity(sessions);
    sut.mark('ses_1');
    await expect(sut.flush()).rejects.toThrow('database down');
    expect(sut.pending).toBe(0);
  });
});
