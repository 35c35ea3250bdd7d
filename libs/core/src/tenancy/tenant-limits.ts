// A tenant's ceilings. Caller-supplied session limits are clamped to these; absent
// fields fall back to the platform's maxima.
export interface TenantLimits {
  memoryMb?: number;
  cpus?: number;
  timeoutMs?: number;
  pids?: number;
  sessionDiskMb?: number;
  maxSessions?: number;
  // Total bytes of the tenant's thread files (all threads).
  vfsBytes?: number;
  // Live files in one thread.
  maxFilesPerThread?: number;
  // Stored artifacts: how many, how many bytes, and how long each is kept (0: forever).
  artifactCount?: number;
  artifactBytes?: number;
  artifactRetentionSeconds?: number;
  // Batch items of the tenant running at once, across its batches and all workers.
  batchConcurrency?: number;
  // API requests per minute, and executions running at once (RATE_LIMITED past them).
  requestsPerMinute?: number;
  concurrentExecutions?: number;
  // The hosts the tenant's sessions may ask to reach (docs/network.md); absent: none.
  network?: NetworkCeiling;
  // Snapshots of its sessions kept at once, and their bytes (compressed).
  snapshotCount?: number;
  snapshotBytes?: number;
  // The isolation tiers its sessions may run on, the first one theirs by default
  // (docs/sessions.md); absent: those the deployment offers, its default first.
  tiers?: SandboxTier[];
}

// runc: a container under Docker's runtime; gvisor: under gVisor's, whose sandboxes can
// hibernate and be snapshotted (SANDBOX_GVISOR_RUNTIME).
export type SandboxTier = 'runc' | 'gvisor';
export const SANDBOX_TIERS = ['runc', 'gvisor'] as const satisfies readonly SandboxTier[];

// A tenant's network ceiling: host patterns (libs/egress, allow-entries.ts) and the
// private ranges an operator lets its sessions reach besides public addresses.
export interface NetworkCeiling {
  allow: string[];
  ranges?: string[];
}

export const TENANT_LIMIT_KEYS = [
  'memoryMb',
  'cpus',
  'timeoutMs',
  'pids',
  'sessionDiskMb',
  'maxSessions',
  'vfsBytes',
  'maxFilesPerThread',
  'artifactCount',
  'artifactBytes',
  'artifactRetentionSeconds',
  'batchConcurrency',
  'requestsPerMinute',
  'concurrentExecutions',
  'snapshotCount',
  'snapshotBytes',
] as const satisfies readonly (keyof TenantLimits)[];
