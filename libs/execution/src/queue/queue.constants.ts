import type { EffectiveLimits } from '../runtime/sandbox-runtime.js';

// The contract between the gateway (producer) and the workers (consumers). Each worker
// consumes its own queue, so a session's jobs always reach the worker that holds its
// container.
export const WORKER_QUEUE_PREFIX = 'drydock-worker-';

export function workerQueueName(workerId: string): string {
  return `${WORKER_QUEUE_PREFIX}${workerId}`;
}

export const JobName = {
  StartSession: 'start-session',
  Execute: 'execute',
  StopSession: 'stop-session',
  StageDataset: 'stage-dataset',
} as const;
export type JobName = (typeof JobName)[keyof typeof JobName];

// A dataset a session asked for (docs/datasets.md): `local_ro` is mounted read-only at
// /data/<name>; `staged` is copied into /session/data/<name> when the sandbox starts.
export interface SessionDataset {
  name: string;
  mode: 'local_ro' | 'staged';
}

export interface SessionSpec {
  sessionId: string;
  tenantId: string;
  threadId: string;
  limits: EffectiveLimits;
  // Absent in jobs queued before these existed: tmpfs and no datasets.
  storage?: 'tmpfs' | 'bind';
  datasets?: SessionDataset[];
}

export interface StartSessionJobData {
  session: SessionSpec;
}

export interface ExecuteJobData {
  session: SessionSpec;
  executionId: string;
  code: string;
  timeoutMs: number;
}

export interface StopSessionJobData {
  session: Pick<SessionSpec, 'sessionId' | 'tenantId'>;
}

export interface StageDatasetJobData {
  session: SessionSpec;
  name: string;
}

export interface JobDataByName {
  [JobName.StartSession]: StartSessionJobData;
  [JobName.Execute]: ExecuteJobData;
  [JobName.StopSession]: StopSessionJobData;
  [JobName.StageDataset]: StageDatasetJobData;
}

// Job ids double as BullMQ's de-duplication key: a retried request for the same
// execution can never enqueue a second run.
export function jobIdFor<N extends JobName>(name: N, data: JobDataByName[N]): string | undefined {
  if (name === JobName.Execute) return `exec-${(data as ExecuteJobData).executionId}`;
  return undefined;
}

// Shared by all workers: periodic housekeeping, scheduled with a BullMQ job scheduler
// so that one run happens per period whatever the number of workers.
export const MAINTENANCE_QUEUE = 'drydock-maintenance';
export const MaintenanceJob = {
  SweepSessions: 'sweep-sessions',
  ExpireArtifacts: 'expire-artifacts',
} as const;

// Redis pub/sub channel on which a worker relays live output of one execution.
export function executionStreamChannel(executionId: string): string {
  return `drydock:exec-stream:${executionId}`;
}

// Redis keys of the worker registry.
export const WORKER_REGISTRY_SET = 'drydock:workers';
export function workerHeartbeatKey(workerId: string): string {
  return `drydock:worker:${workerId}`;
}
