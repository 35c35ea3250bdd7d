import { makeConfig } from '../../../test/factories/config.factory.js';
import { resolveLimits, tenantCeiling } from './session-limits.js';

describe(resolveLimits.name, () => {
  const config = makeConfig({ SANDBOX_MAX_MEMORY_MB: '4096', SANDBOX_MAX_CPUS: '2' });

  it('should apply the platform defaults when neither caller nor tenant says otherwise', () => {
    const sut = resolveLimits(config, {}, {});
    expect(sut).toMatchObject({ memoryMb: 512, cpus: 1, timeoutMs: 30_000, pids: 128 });
  });

  it("should clamp caller limits to the tenant's maxima", () => {
    const sut = resolveLimits(config, { memoryMb: 256, cpus: 0.5, timeoutMs: 5000 }, { memoryMb: 2048, cpus: 2, timeoutMs: 60_000 });
    expect(sut).toMatchObject({ memoryMb: 256, cpus: 0.5, timeoutMs: 5000 });
  });

  it("should never let a tenant's limits exceed the platform's", () => {
    const sut = tenantCeiling(config, { memoryMb: 1_000_000, cpus: 64 });
    expect(sut).toMatchObject({ memoryMb: 4096, cpus: 2 });
  });

  it('should clamp defaults that exceed a small tenant ceiling', () => {
    const sut = resolveLimits(config, { memoryMb: 128, pids: 32 }, {});
    expect(sut).toMatchObject({ memoryMb: 128, pids: 32 });
  });

  it('should keep caller limits below the maxima as asked', () => {
    expect(resolveLimits(config, {}, { memoryMb: 1024 }).memoryMb).toBe(1024);
  });
});
