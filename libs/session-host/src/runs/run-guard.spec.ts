import { CLAIM_MARGIN_MS, LEGACY_CLAIM_MS, runWindow } from './run-guard.js';

describe(runWindow.name, () => {
  const HOUR = 3600_000;
  const now = 1_800_000_000_000;

  it('should let a job start before the deadline and hold its claim past both the deadline and the run', () => {
    const window = runWindow({ recordedAt: now - 10 * 60_000, timeoutMs: 30_000 }, HOUR, now);
    expect(window).toEqual({ expired: false, holdMs: 50 * 60_000 + 30_000 + CLAIM_MARGIN_MS });
  });

  it('should refuse a job at or after the deadline', () => {
    expect(runWindow({ recordedAt: now - HOUR, timeoutMs: 30_000 }, HOUR, now)).toEqual({ expired: true });
    expect(runWindow({ recordedAt: now - 2 * HOUR, timeoutMs: 30_000 }, HOUR, now)).toEqual({ expired: true });
  });

  it('should apply no deadline to a job from a gateway that does not send recordedAt, and hold its claim a week', () => {
    expect(runWindow({ timeoutMs: 30_000 }, HOUR, now)).toEqual({ expired: false, holdMs: LEGACY_CLAIM_MS });
  });

  it('should outlive every earlier claim of the same execution', () => {
    // Any earlier claim was made after the execution was recorded; a start that is
    // allowed comes before that claim expires.
    const recordedAt = now - 30 * 60_000;
    const earlier = runWindow({ recordedAt, timeoutMs: 1_000 }, HOUR, recordedAt + 1);
    if (earlier.expired) throw new Error('expected a window');
    const lastAllowedStart = recordedAt + HOUR - 1;
    expect(recordedAt + 1 + earlier.holdMs).toBeGreaterThan(lastAllowedStart);
  });
});
