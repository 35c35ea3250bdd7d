import type { SandboxTier } from '@drydock/core';
import { randomUUID } from 'node:crypto';
import type { CommandSpec } from '../protocol/repl-protocol.js';
import type { EffectiveLimits } from '../runtime/sandbox-runtime.js';
import type { JobError } from './job-errors.js';

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
  // Checkpoints the session's sandbox into the blob store and removes its container
  // (docs/sessions.md); answered once the session is hibernated.
  HibernateSession: 'hibernate-session',
  // Takes a snapshot of the session's sandbox between runs; the session goes on.
  SnapshotSession: 'snapshot-session',
  StageDataset: 'stage-dataset',
  // A request about a background process (read, stdin, signal, unwatch): answered by
  // the worker at once, beside the session's runs.
  ProcessOp: 'process-op',
  // Opens a terminal in the session's sandbox (its thread's files in first) and relays
  // it over terminalInputChannel / terminalOutputChannel until it ends.
  OpenTerminal: 'open-terminal',
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
  // The session's template (docs/templates.md): the image its sandbox starts from, by
  // digest in the registry. Absent: the platform's image.
  image?: string;
  // The session's network policy when it has one (docs/network.md): its sandbox gets the
  // egress proxy's socket. The proxy reads the live policy for each connection.
  network?: SessionNetwork;
  // Absent in jobs queued before tiers existed: runc.
  tier?: SandboxTier;
  // What it comes to when idle; absent: the deployment's SESSION_IDLE_ACTION.
  idleAction?: 'hibernate' | 'end';
}

// The hosts a session's code may reach through the platform's egress proxy.
export interface SessionNetwork {
  allow: string[];
}

export interface StartSessionJobData {
  session: SessionSpec;
}

export interface ExecuteJobData {
  session: SessionSpec;
  executionId: string;
  code: string;
  // A command (POST .../commands): the process to run beside the REPL; `code` then holds
  // its canonical JSON, as recorded.
  command?: CommandSpec;
  // With `command`: start it as a background process and answer at once (its pid).
  background?: true;
  timeoutMs: number;
  // Whether the caller relays live output: only then are chunks published on
  // executionStreamChannel (a PUBLISH each). Absent in jobs queued before it existed:
  // published.
  stream?: boolean;
  // The thread's file revision the gateway read when it recorded the execution. A
  // worker whose sandbox already holds exactly this revision skips its own lookup; any
  // other value (or none, from an older gateway) makes it look the revision up.
  threadRevision?: number;
  // When the execution was recorded (ms since the epoch, the record's createdAt): a job
  // that has not started EXECUTION_START_DEADLINE_MS after it is refused, which bounds
  // how long the run-once claim must last. Absent from an older gateway: no deadline.
  recordedAt?: number;
  // Set when this dispatch is the only one the execution can ever have: the gateway
  // recorded it for this request, without an idempotency key (no retry can name it), and
  // it is not a resend after SESSION_MOVED. The lane delivers a push once, and a resend
  // only follows an answer that the code did not run, so the worker skips the run-once
  // claim (a Redis round trip before the code starts, and a key kept for an hour).
  onlyDispatch?: true;
  // The tenant's execution slot the run holds (TenantRateLimiter): the worker frees it in
  // the round trip that answers the run. Absent when limits are not enforced.
  slot?: { key: string; id: string };
}

export interface SnapshotSessionJobData {
  session: SessionSpec;
  snapshotId: string;
  // ISO time.
  expiresAt: string;
  // The tenant's snapshot quota, checked as the snapshot is recorded.
  quota: { maxCount: number; maxBytes: number };
}

// What the worker answers to SnapshotSession.
export interface SnapshotTaken {
  id: string;
  sessionId: string;
  sizeBytes: number;
  createdAt: string;
  expiresAt: string;
}

export interface StopSessionJobData {
  session: Pick<SessionSpec, 'sessionId' | 'tenantId'>;
}

export interface StageDatasetJobData {
  session: SessionSpec;
  name: string;
}

// What a ProcessOp asks about one background process (SandboxProcesses): `read` the
// kept output after chunk `after` (and, with `watchToken`, lease its live chunks on
// processEventsChannel for PROCESS_WATCH_LEASE_MS), `unwatch`, `stdin`, `signal`.
export type ProcessOpJobData = { session: Pick<SessionSpec, 'sessionId' | 'tenantId'>; processId: string } & (
  | { op: 'read'; after: number; watchToken?: string }
  | { op: 'unwatch'; watchToken: string }
  | { op: 'stdin'; data64: string; eof: boolean }
  | { op: 'signal'; signal: 'SIGINT' | 'SIGTERM' | 'SIGKILL' | 'SIGHUP' }
);

// A watcher renews its lease (another read with its token) this often; one that stops
// (its gateway gone) stops being served after PROCESS_WATCH_LEASE_MS.
export const PROCESS_WATCH_RENEW_MS = 20_000;
export const PROCESS_WATCH_LEASE_MS = 60_000;

// Redis pub/sub channel of one background process: its chunks while watched
// ({type: 'chunk', seq, name, text}) and its end ({type: 'exit', exitCode, signal}).
export function processEventsChannel(processId: string): string {
  return `drydock:proc-events:${processId}`;
}

export type ProcessChannelMessage =
  | { type: 'chunk'; seq: number; name: 'stdout' | 'stderr'; text: string }
  | { type: 'exit'; exitCode: number | null; signal: string | null; status: string };

// What an OpenTerminal asks: a terminal `terminalId` of `cols` x `rows` in the
// session's sandbox. Answered once the shell runs ({pid}); then its bytes go both ways
// over the two channels below.
export interface OpenTerminalJobData {
  session: SessionSpec;
  terminalId: string;
  cols: number;
  rows: number;
}

// The gateway holding a terminal's WebSocket pings its worker this often, and the
// worker hangs up a terminal that heard nothing for TERMINAL_LEASE_MS (its gateway or
// client gone without a close); the worker answers each ping, and a gateway that hears
// nothing for the lease ends the WebSocket (the worker gone).
export const TERMINAL_PING_MS = 10_000;
export const TERMINAL_LEASE_MS = 35_000;

// Redis pub/sub channels of one terminal: what the gateway sends (typed bytes, resizes,
// the hang-up, pings) and what the worker sends back (what the terminal shows, pongs,
// its end). Bytes travel as base64 in JSON, as on the host channel.
export function terminalInputChannel(terminalId: string): string {
  return `drydock:pty-in:${terminalId}`;
}
export function terminalOutputChannel(terminalId: string): string {
  return `drydock:pty-out:${terminalId}`;
}

export type TerminalInputMessage =
  | { type: 'input'; data64: string }
  | { type: 'resize'; cols: number; rows: number }
  | { type: 'close' }
  | { type: 'ping' };

export type TerminalOutputMessage =
  | { type: 'output'; data64: string }
  | { type: 'pong' }
  // `exitCode` null: ended by a signal, or with its sandbox (`reason` then says why).
  | { type: 'exit'; exitCode: number | null; signal: string | null; reason?: string };

export interface JobDataByName {
  [JobName.StartSession]: StartSessionJobData;
  [JobName.Execute]: ExecuteJobData;
  [JobName.StopSession]: StopSessionJobData;
  [JobName.HibernateSession]: StartSessionJobData;
  [JobName.SnapshotSession]: SnapshotSessionJobData;
  [JobName.StageDataset]: StageDatasetJobData;
  [JobName.ProcessOp]: ProcessOpJobData;
  [JobName.OpenTerminal]: OpenTerminalJobData;
}

// Job ids double as BullMQ's de-duplication key: a retried request for the same
// execution can never enqueue a second run. Other jobs get a fresh id, known before
// the job is added, so the gateway is listening for its reply before it can arrive.
export function jobIdFor<N extends JobName>(name: N, data: JobDataByName[N]): string {
  if (name === JobName.Execute) return `exec-${(data as ExecuteJobData).executionId}`;
  return `${name}-${randomUUID()}`;
}

// How a job's outcome gets back to the gateway waiting for it: the dispatcher names its
// own Redis pub/sub channel in the job (`replyTo`), and the worker publishes a JobReply
// there as soon as the job is done, before BullMQ records it as finished. Absent in
// jobs queued before it existed (nobody waits on a reply for those).
export interface JobReplyRoute {
  replyTo?: string;
  // The HTTP request that sent the job (X-Request-Id), for the worker's logs.
  requestId?: string;
}

// A failure is typed (job-errors.ts): the gateway rethrows the worker's DrydockError.
export type JobReply = { jobId: string; ok: true; value: unknown } | { jobId: string; ok: false; error: JobError };

// What a failed job leaves on itself for a gateway that missed the reply: the typed
// error, stored in the job's data before BullMQ records the failure (its
// `failedReason` keeps only the message, for the queue dashboard).
export interface JobFailureRecord {
  failure?: JobError;
}

export function jobReplyChannel(gatewayInstanceId: string): string {
  return `drydock:job-reply:${gatewayInstanceId}`;
}

// Batch items (libs/batches): one queue shared by every worker, each taking items with
// its own batch slots. A job names its item; the code stays in PostgreSQL. Its id is
// the item's, so an item is in the queue at most once.
export const BATCH_QUEUE = 'drydock-batch-items';

export interface BatchItemJobData {
  batchId: string;
  tenantId: string;
  index: number;
}

export function batchItemJobId(item: Pick<BatchItemJobData, 'batchId' | 'index'>): string {
  return `item-${item.batchId}-${item.index}`;
}

// Shared by all workers: periodic housekeeping, scheduled with a BullMQ job scheduler
// so that one run happens per period whatever the number of workers.
export const MAINTENANCE_QUEUE = 'drydock-maintenance';
export const MaintenanceJob = {
  SweepSessions: 'sweep-sessions',
  ExpireArtifacts: 'expire-artifacts',
  // Deletes expired batches; re-queues items a crash left admitted or running.
  BatchMaintenance: 'batch-maintenance',
  // Fails template builds lost with their worker; removes deleted templates' images from
  // the registry once no live session uses them.
  TemplateMaintenance: 'template-maintenance',
  // Deletes egress log rows older than EGRESS_LOG_RETENTION_DAYS.
  EgressLogRetention: 'egress-log-retention',
} as const;

// Redis pub/sub channel on which a worker relays live output of one execution.
export function executionStreamChannel(executionId: string): string {
  return `drydock:exec-stream:${executionId}`;
}

// Redis pub/sub channel on which gateways ask a worker to stop one of its executions
// (POST /v1/executions/:id/interrupt, a cancelled agent run). Fire and forget: the
// execution's own answer says how it ended.
export function executionInterruptChannel(workerId: string): string {
  return `drydock:exec-interrupt:${workerId}`;
}

export interface ExecutionInterruptMessage {
  executionId: string;
}

// Set with every interrupt's message, and kept while the execution could still run, so
// an interrupt its worker never received is still found: by the gateway that resends the
// job after SESSION_MOVED, and by a worker whose subscriber reconnects.
export function executionInterruptedKey(executionId: string): string {
  return `drydock:exec-interrupted:${executionId}`;
}

// Redis keys of the worker registry.
export const WORKER_REGISTRY_SET = 'drydock:workers';
export function workerHeartbeatKey(workerId: string): string {
  return `drydock:worker:${workerId}`;
}
// Set by POST /admin/workers/:id/drain; the worker reads it with every heartbeat.
export function workerDrainKey(workerId: string): string {
  return `drydock:worker-drain:${workerId}`;
}
