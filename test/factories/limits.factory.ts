import type { EffectiveLimits } from '@drydock/execution';

export function makeLimits(overrides: Partial<EffectiveLimits> = {}): EffectiveLimits {
  return {
    memoryMb: 512,
    cpus: 1,
    timeoutMs: 30_000,
    pids: 128,
    sessionDiskMb: 256,
    tmpDiskMb: 64,
    maxOutputBytes: 1024 * 1024,
    ...overrides,
  };
}
