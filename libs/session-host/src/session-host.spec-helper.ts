import type { CompletedRun, ExecuteJobData, ExecutionRecord, ExecutionsRepository, SessionSpec } from '@drydock/execution';
import { LocalBlobStore } from '@drydock/artifacts';
import { DatasetRegistry, type CheckpointRecord, type NewCheckpoint, type SessionRecord, type SessionsRepository } from '@drydock/sessions';
import { mkdtempSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { makeConfig } from '../../../test/factories/config.factory.js';
import { makeLimits } from '../../../test/factories/limits.factory.js';
import { FakeRuntime, inMemoryVfs } from '../../../test/fakes/fake-sandbox.js';
import type { ArtifactIngester } from './artifacts/artifact-ingester.js';
import { SessionFileSync } from './files/session-file-sync.js';
import { HostedSessionRegistry } from './hosting/hosted-session.registry.js';
import { IdleReaper } from './lifecycle/idle-reaper.js';
import { SessionActivity } from './lifecycle/session-activity.js';
import { SessionLifecycle } from './lifecycle/session-lifecycle.service.js';
import { ExecutionRunner } from './runs/execution-runner.js';
import { BackgroundProcesses } from './processes/background-processes.js';
import type { Redis } from 'ioredis';
import type { RunGuard } from './runs/run-guard.js';
import { SessionCheckpoints } from './hibernation/session-checkpoints.js';
import { DatasetStager } from './sandboxes/dataset-stager.js';
import { SandboxProvisioner } from './sandboxes/sandbox-provisioner.js';
import { WarmSandboxPool } from './sandboxes/warm-sandbox-pool.js';
import { PlatformMetrics } from '@drydock/metrics';

// The session host wired with fakes of its ports: a FakeRuntime, in-memory sessions,
// executions and thread files, a run guard in a Set. Artifact ingestion has its own
// e2e tests; here no run leaves any.

export type FakeSessions = SessionsRepository & {
  rows: Map<string, SessionRecord>;
  ended: string[];
  touched: string[][];
  checkpoints: Map<string, CheckpointRecord>;
};

export function fakeSessions(rows: Partial<SessionRecord>[] = [{}]): FakeSessions {
  const map = new Map<string, SessionRecord>();
  for (const row of rows) {
    const session = { id: 'ses_1', tenantId: 'ten_1', threadId: 'thr_1', status: 'ready', containerId: null, lastUsedAt: new Date(), ...row } as SessionRecord;
    map.set(session.id, session);
  }
  const ended: string[] = [];
  const touched: string[][] = [];
  const checkpoints = new Map<string, CheckpointRecord>();
  return {
    rows: map,
    ended,
    touched,
    findById: async (_t: string, id: string) => map.get(id) ?? null,
    recordContainer: async (_t: string, id: string, containerId: string) => {
      const row = map.get(id)!;
      if (row.hibernationId) checkpoints.delete(row.hibernationId);
      Object.assign(row, { containerId, status: 'ready', hibernationId: null });
    },
    touch: async () => undefined,
    touchMany: async (ids: string[]) => void touched.push(ids),
    end: async (_t: string, id: string) => {
      ended.push(id);
      const row = map.get(id);
      if (row) row.status = 'ended';
    },
    listLiveOnWorker: async () => [...map.values()].filter((s) => s.status !== 'ended'),
    recordCheckpoint: async (tenantId: string, checkpoint: NewCheckpoint, commitBlob: () => Promise<void>, quota?: { maxCount: number }) => {
      const row = map.get(checkpoint.sessionId);
      if (!row || row.tenantId !== tenantId || row.status === 'ended') return 'ended';
      if (quota && checkpoint.kind === 'snapshot' && [...checkpoints.values()].filter((c) => c.kind === 'snapshot').length >= quota.maxCount) return 'count';
      await commitBlob();
      checkpoints.set(checkpoint.id, { ...checkpoint, tenantId, createdAt: new Date() });
      if (checkpoint.kind === 'hibernation') Object.assign(row, { status: 'hibernated', hibernationId: checkpoint.id, containerId: null });
      return null;
    },
    findCheckpoint: async (tenantId: string, id: string) => {
      const found = checkpoints.get(id);
      return found && found.tenantId === tenantId ? found : null;
    },
    endHibernatedBefore: async (before: Date) => {
      const gone = [...map.values()].filter((s) => s.status === 'hibernated' && s.lastUsedAt < before);
      for (const row of gone) Object.assign(row, { status: 'ended', hibernationId: null });
      return gone.map((s) => s.id);
    },
    deleteExpiredSnapshots: async () => 0,
    checkpoints,
  } as unknown as FakeSessions;
}

export type FakeExecutions = ExecutionsRepository & { records: Map<string, Partial<ExecutionRecord>> };

export function fakeExecutions(): FakeExecutions {
  const records = new Map<string, Partial<ExecutionRecord>>();
  return {
    records,
    markRunning: async (_t: string, id: string) => {
      const record = records.get(id) ?? { id, status: 'queued' };
      if (record.status !== 'queued') return false;
      records.set(id, { ...record, status: 'running' });
      return true;
    },
    findById: async (_t: string, id: string) => ({ ...records.get(id), createdAt: new Date(), finishedAt: null }),
    complete: async (_t: string, id: string, outcome: CompletedRun) => {
      const record = { ...records.get(id), ...outcome, id, createdAt: new Date(), finishedAt: new Date() };
      records.set(id, record);
      return record;
    },
    completeUnfinished: async (_t: string, id: string, outcome: CompletedRun) => {
      const status = records.get(id)?.status ?? 'queued';
      if (status !== 'queued' && status !== 'running') return null;
      const record = { ...records.get(id), ...outcome, id, createdAt: new Date(), finishedAt: new Date() };
      records.set(id, record);
      return record;
    },
  } as unknown as FakeExecutions;
}

export function fakeGuard(): RunGuard & { claimed: Set<string>; holds: number[] } {
  const claimed = new Set<string>();
  const holds: number[] = [];
  return {
    claimed,
    holds,
    claim: async (id: string, holdMs: number) => {
      holds.push(holdMs);
      return !claimed.has(id) && !!claimed.add(id);
    },
  };
}

export const sessionSpec = (over: Partial<SessionSpec> = {}): SessionSpec => ({
  sessionId: 'ses_1',
  tenantId: 'ten_1',
  threadId: 'thr_1',
  limits: makeLimits(),
  ...over,
});

export const executeJob = (executionId: string, over: Partial<SessionSpec> = {}): ExecuteJobData => ({
  executionId,
  code: '1',
  timeoutMs: 1000,
  session: sessionSpec(over),
});

export function hostWithFakes(options: { sessions?: FakeSessions; env?: Record<string, string> } = {}) {
  const config = makeConfig(options.env);
  const runtime = new FakeRuntime();
  const sessions = options.sessions ?? fakeSessions();
  const executions = fakeExecutions();
  const guard = fakeGuard();
  const files = inMemoryVfs();
  const noArtifacts = { ingest: async () => ({ artifacts: [], skipped: [] }) } as unknown as ArtifactIngester;
  const registry = new HostedSessionRegistry(sessions);
  const stager = new DatasetStager(new DatasetRegistry(config));
  const pool = new WarmSandboxPool(config, runtime);
  const blobs = new LocalBlobStore(mkdtempSync(join(tmpdir(), 'host-blobs-')));
  const checkpoints = new SessionCheckpoints(config, runtime, sessions, blobs);
  // Background processes publish on Redis; these specs start none.
  const background = new BackgroundProcesses(executions, { publish: async () => 0 } as unknown as Redis, registry);
  const fileSync = new SessionFileSync(files.vfs, files.config);
  const provisioner = new SandboxProvisioner(config, runtime, sessions, registry, stager, pool, checkpoints, background, fileSync);
  const activity = new SessionActivity(sessions);
  const runner = new ExecutionRunner(config, executions, guard, registry, provisioner, fileSync, noArtifacts, activity, new PlatformMetrics(), background);
  const lifecycle = new SessionLifecycle(registry, provisioner, stager, fileSync, activity, pool, checkpoints);
  const reaper = new IdleReaper(config, sessions, registry, lifecycle, checkpoints);
  return { config, runtime, sessions, executions, guard, files, registry, stager, pool, provisioner, fileSync, activity, runner, lifecycle, reaper, blobs, checkpoints };
}
