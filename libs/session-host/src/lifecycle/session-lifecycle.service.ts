import { Injectable, Logger } from '@nestjs/common';
import { DrydockError } from '@drydock/core';
import type { SessionSpec, SnapshotSessionJobData, SnapshotTaken, StageDatasetJobData } from '@drydock/execution';
import { SessionsError, type StagedDataset } from '@drydock/sessions';
import { SessionFileSync } from '../files/session-file-sync.js';
import { fileStateOf, threadOf } from '../hosting/hosted-session.js';
import { HostedSessionRegistry } from '../hosting/hosted-session.registry.js';
import { SessionCheckpoints } from '../hibernation/session-checkpoints.js';
import { DatasetStager } from '../sandboxes/dataset-stager.js';
import { SandboxProvisioner } from '../sandboxes/sandbox-provisioner.js';
import { WarmSandboxPool } from '../sandboxes/warm-sandbox-pool.js';
import { SessionActivity } from './session-activity.js';

// The session jobs other than executions: start (container up, thread files in),
// stage a dataset (in the session's order, like a run), stop; and the worker's own
// shutdown. Every failure the caller can act on is a typed error.
@Injectable()
export class SessionLifecycle {
  private readonly logger = new Logger(SessionLifecycle.name);

  constructor(
    private readonly registry: HostedSessionRegistry,
    private readonly provisioner: SandboxProvisioner,
    private readonly stager: DatasetStager,
    private readonly fileSync: SessionFileSync,
    private readonly activity: SessionActivity,
    private readonly pool: WarmSandboxPool,
    private readonly checkpoints: SessionCheckpoints,
  ) {}

  // Ready to host: the warm pool starts filling (after the worker cleared what its
  // previous life left, which would otherwise remove the pool's first sandboxes).
  open(): void {
    this.pool.start();
    // Checkpoints a previous life kept here belong to sessions it no longer hosts.
    void this.checkpoints.sweepLocal().catch((error: Error) => this.logger.warn(`clearing the local checkpoints failed: ${error.message}`));
  }

  async start(spec: SessionSpec): Promise<{ sessionId: string; containerId: string }> {
    const hosted = await this.registry.acquire(spec);
    return this.registry.serialize(hosted, async () => {
      const sandbox = await this.provisioner.ensure(hosted).catch((error: unknown) => {
        if (error instanceof DrydockError) throw error;
        throw SessionsError.sandboxFailed((error as Error).message);
      });
      // A new session starts with the thread's files in place. Should this fail, the
      // first run pushes again (and reports a failure to the caller).
      await this.fileSync
        .push(threadOf(spec), sandbox, fileStateOf(hosted, sandbox))
        .catch((error: Error) => this.logger.warn(`pushing files into ${spec.sessionId} failed: ${error.message}`));
      return { sessionId: spec.sessionId, containerId: sandbox.id };
    });
  }

  // Copies a dataset into /session/data/<name> of the running sandbox, between runs.
  async stageDataset(data: StageDatasetJobData): Promise<StagedDataset> {
    const hosted = await this.registry.acquire(data.session);
    // The spec now lists the dataset, so a re-created container stages it again.
    hosted.spec = data.session;
    return this.registry.serialize(hosted, async () => {
      if (!this.registry.isCurrent(hosted)) throw SessionsError.ended(data.session.sessionId);
      const sandbox = await this.provisioner.ensure(hosted).catch((error: unknown) => {
        if (error instanceof DrydockError) throw error;
        throw SessionsError.sandboxFailed((error as Error).message);
      });
      return this.stager.stage(hosted.spec.tenantId, sandbox, data.name);
    });
  }

  // Checkpoints the session's sandbox between its jobs and lets it go: the session is
  // `hibernated`, its entry here holds no sandbox, and its next job (here, or on another
  // worker after a drain) restores it. CHECKPOINT_NOT_AVAILABLE where its sandbox cannot be checkpointed,
  // SESSION_BUSY when it cannot be now (it runs on).
  async hibernate(spec: SessionSpec): Promise<void> {
    const why = this.checkpoints.unavailable(spec);
    if (why) throw SessionsError.checkpointNotAvailable(spec.sessionId, why);
    const hosted = await this.registry.acquire(spec);
    await this.registry.serialize(hosted, async () => {
      if (!this.registry.isCurrent(hosted)) throw SessionsError.ended(spec.sessionId);
      // Not resumed since it hibernated (a repeated request): nothing to do.
      if (hosted.resumeFrom && !hosted.sandbox?.alive) return;
      const sandbox = await this.provisioner.ensure(hosted).catch((error: unknown) => {
        if (error instanceof DrydockError) throw error;
        throw SessionsError.sandboxFailed((error as Error).message);
      });
      // Files written into the thread since the last run are in the checkpoint too.
      await this.fileSync.push(threadOf(hosted.spec), sandbox, fileStateOf(hosted, sandbox));
      let checkpointId: string;
      try {
        checkpointId = (await this.checkpoints.hibernate(hosted.spec, sandbox)).id;
      } catch (error) {
        // Still running (refused, busy): the session goes on here as it was.
        if (sandbox.alive) throw error;
        // Gone without a stored checkpoint: its next run starts afresh, told so.
        hosted.sandbox = null;
        hosted.stateLostPending = true;
        throw error;
      }
      hosted.sandbox = null;
      hosted.files = null;
      hosted.resumeFrom = checkpointId;
    });
  }

  async stop(sessionId: string): Promise<void> {
    const hosted = this.registry.remove(sessionId);
    if (hosted) await this.provisioner.release(hosted);
  }

  // A snapshot of the session between its jobs (docs/sessions.md): checkpointed, stored,
  // and restored at once so that the session goes on. CHECKPOINT_NOT_AVAILABLE,
  // SESSION_BUSY and SNAPSHOT_QUOTA_EXCEEDED as hibernate and the quota say.
  async snapshot(data: SnapshotSessionJobData): Promise<SnapshotTaken> {
    const spec = data.session;
    const why = this.checkpoints.unavailable(spec);
    if (why) throw SessionsError.checkpointNotAvailable(spec.sessionId, why);
    const hosted = await this.registry.acquire(spec);
    return this.registry.serialize(hosted, async () => {
      if (!this.registry.isCurrent(hosted)) throw SessionsError.ended(spec.sessionId);
      const sandbox = await this.provisioner.ensure(hosted).catch((error: unknown) => {
        if (error instanceof DrydockError) throw error;
        throw SessionsError.sandboxFailed((error as Error).message);
      });
      await this.fileSync.push(threadOf(hosted.spec), sandbox, fileStateOf(hosted, sandbox));
      try {
        const record = await this.checkpoints.snapshot(
          hosted.spec,
          sandbox,
          { id: data.snapshotId, expiresAt: new Date(data.expiresAt), quota: data.quota },
          async (restoreFrom) => {
            await this.provisioner.restoreFile(hosted, restoreFrom);
          },
        );
        return {
          id: record.id,
          sessionId: record.sessionId,
          sizeBytes: record.sizeBytes,
          createdAt: record.createdAt.toISOString(),
          expiresAt: data.expiresAt,
        };
      } finally {
        // The checkpoint removed the container; had the restore failed, the next run
        // starts afresh, told so.
        if (!hosted.sandbox?.alive) {
          hosted.sandbox = null;
          hosted.stateLostPending = true;
        }
      }
    });
  }

  // A draining worker's sessions that can be checkpointed hibernate instead of being
  // lost (their next job, on another worker, restores them), two at a time, until
  // `deadline` (ms since the epoch); what is left is destroyed by shutdown. Their counts.
  async hibernateAll(deadline: number): Promise<{ hibernated: number; failed: number }> {
    const waiting = this.registry.all().filter((h) => h.sandbox?.alive && this.checkpoints.unavailable(h.spec) === null);
    let hibernated = 0;
    let failed = 0;
    const next = async (): Promise<void> => {
      for (let hosted = waiting.shift(); hosted && Date.now() < deadline; hosted = waiting.shift()) {
        try {
          await this.hibernate(hosted.spec);
          hibernated++;
        } catch (error) {
          failed++;
          this.logger.warn(`${hosted.spec.sessionId} did not hibernate for the drain: ${(error as Error).message}`);
        }
      }
    };
    await Promise.all([next(), next()]);
    return { hibernated, failed: failed + waiting.length };
  }

  async shutdown(): Promise<void> {
    await this.pool.close();
    // Hibernated sessions resume elsewhere, from the blob store.
    await this.checkpoints.sweepLocal().catch(() => 0);
    await this.activity.flush().catch(() => undefined);
    await this.provisioner.destroyAll(this.registry.removeAll());
  }
}
