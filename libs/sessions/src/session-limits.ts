import type { AppConfig, TenantLimits } from '@drydock/core';
import type { EffectiveLimits } from '@drydock/execution';

export interface RequestedLimits {
  memoryMb?: number;
  cpus?: number;
  timeoutMs?: number;
}

// The ceiling for one tenant: its own limits, never above the platform's.
export function tenantCeiling(config: Pick<AppConfig, 'maxLimits'>, tenant: TenantLimits): EffectiveLimits {
  const max = config.maxLimits;
  return {
    memoryMb: Math.min(tenant.memoryMb ?? max.memoryMb, max.memoryMb),
    cpus: Math.min(tenant.cpus ?? max.cpus, max.cpus),
    timeoutMs: Math.min(tenant.timeoutMs ?? max.timeoutMs, max.timeoutMs),
    pids: Math.min(tenant.pids ?? max.pids, max.pids),
    sessionDiskMb: Math.min(tenant.sessionDiskMb ?? max.sessionDiskMb, max.sessionDiskMb),
    tmpDiskMb: max.tmpDiskMb,
    maxOutputBytes: max.maxOutputBytes,
  };
}

// Caller limits are clamped, not rejected: a caller asking for more gets the most it
// may have, and the response shows what it got.
export function resolveLimits(
  config: Pick<AppConfig, 'maxLimits' | 'defaultLimits'>,
  tenant: TenantLimits,
  requested: RequestedLimits = {},
): EffectiveLimits {
  const ceiling = tenantCeiling(config, tenant);
  const defaults = config.defaultLimits;
  const pick = (key: keyof EffectiveLimits, value: number | undefined) =>
    Math.min(value ?? defaults[key], ceiling[key]);
  return {
    memoryMb: pick('memoryMb', requested.memoryMb),
    cpus: pick('cpus', requested.cpus),
    timeoutMs: pick('timeoutMs', requested.timeoutMs),
    pids: pick('pids', undefined),
    sessionDiskMb: pick('sessionDiskMb', undefined),
    tmpDiskMb: pick('tmpDiskMb', undefined),
    maxOutputBytes: pick('maxOutputBytes', undefined),
  };
}
