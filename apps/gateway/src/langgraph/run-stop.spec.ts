import { jest } from '@jest/globals';
import { RunStop } from './run-stop.js';

const PERIOD_MS = 10_000;

describe(RunStop.name, () => {
  let held: boolean;
  let heartbeats: number;
  let log: { lost: jest.Mock<() => void>; failed: jest.Mock<(error: unknown) => void> };
  let client: AbortController;
  let stop: RunStop;

  // Lets a heartbeat's answer (a resolved promise) reach its handler.
  const beat = async () => {
    jest.advanceTimersByTime(PERIOD_MS);
    await Promise.resolve();
    await Promise.resolve();
  };

  beforeEach(() => {
    jest.useFakeTimers();
    held = true;
    heartbeats = 0;
    log = { lost: jest.fn(), failed: jest.fn() };
    client = new AbortController();
    stop = new RunStop(
      client.signal,
      async () => {
        heartbeats++;
        return held;
      },
      PERIOD_MS,
      log,
    );
  });

  afterEach(() => {
    stop.end();
    jest.useRealTimers();
  });

  it('should keep the run going while every heartbeat finds the thread held', async () => {
    await beat();
    await beat();
    expect(heartbeats).toBe(2);
    expect(stop.signal.aborted).toBe(false);
  });

  it('should stop the run as having lost its thread when a heartbeat finds it no longer held', async () => {
    held = false;
    await beat();
    expect(stop.signal.aborted).toBe(true);
    expect(stop.lostThread).toBe(true);
    expect(stop.cancelled).toBe(false);
    expect(log.lost).toHaveBeenCalledTimes(1);
  });

  it('should stop the run as cancelled when its client goes, also before it started', () => {
    client.abort(new Error('client gone'));
    expect(stop.signal.aborted).toBe(true);
    expect(stop.cancelled).toBe(true);
    expect(stop.lostThread).toBe(false);

    const gone = new AbortController();
    gone.abort();
    const late = new RunStop(gone.signal, async () => true, PERIOD_MS, log);
    expect(late.signal.aborted).toBe(true);
    late.end();
  });

  it('should ignore a heartbeat answered after the run ended, and send no more', async () => {
    held = false;
    jest.advanceTimersByTime(PERIOD_MS);
    stop.end();
    await Promise.resolve();
    await Promise.resolve();
    expect(stop.signal.aborted).toBe(false);
    expect(log.lost).not.toHaveBeenCalled();
    await beat();
    expect(heartbeats).toBe(1);
  });

  it('should let go of the client signal when the run ends', () => {
    stop.end();
    client.abort();
    expect(stop.signal.aborted).toBe(false);
  });

  it('should log a heartbeat that failed and keep the run going', async () => {
    const failing = new RunStop(client.signal, () => Promise.reject(new Error('db down')), PERIOD_MS, log);
    jest.advanceTimersByTime(PERIOD_MS);
    await Promise.resolve();
    await Promise.resolve();
    expect(log.failed).toHaveBeenCalledWith(expect.objectContaining({ message: 'db down' }));
    expect(failing.signal.aborted).toBe(false);
    failing.end();
  });
});
