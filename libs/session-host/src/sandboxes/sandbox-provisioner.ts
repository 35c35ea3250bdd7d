import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { SANDBOX_RUNTIME, type Sandbox, type SandboxRuntime, type SandboxSpec } from '@drydock/execution';
import { SESSIONS_REPOSITORY, SessionsError, type SessionsRepository } from '@drydock/sessions';
import type { HostedSession } from '../hosting/hosted-session.js';
import { HostedSessionRegistry } from '../hosting/hosted-session.registry.js';
import { CheckpointRestoreError, SessionCheckpoints } from '../hibernation/session-checkpoints.js';
import { BackgroundProcesses } from '../processes/background-processes.js';
import { SessionFileSync } from '../files/session-file-sync.js';
import { fileStateOf, threadOf } from '../hosting/hosted-session.js';
import { DatasetStager } from './dataset-stager.js';
import { WarmSandboxPool } from './warm-sandbox-pool.js';

// The container lifecycle of hosted sessions: one sandbox each, taken from the warm pool
// or created on demand (one creation at a time per session, however many jobs ask),
// replaced after it died, destroyed with the session (never pooled again).
@Injectable()
export class SandboxProvisioner {
  private readonly logger = new Logger(SandboxProvisioner.name);
  private readonly creating = new Map<string, Promise<Sandbox>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SANDBOX_RUNTIME) private readonly runtime: SandboxRuntime,
    @Inject(SESSIONS_REPOSITORY) private readonly sessions: SessionsRepository,
    private readonly registry: HostedSessionRegistry,
    private readonly stager: DatasetStager,
    private readonly pool: WarmSandboxPool,
    private readonly checkpoints: SessionCheckpoints,
    private readonly background: BackgroundProcesses,
    private readonly fileSync: SessionFileSync,
  ) {}

  // The session's live sandbox, created (with its staged datasets) when it has none.
  // Throws SESSION_ENDED when the session was stopped while its container started;
  // other failures are the runtime's own errors.
  ensure(hosted: HostedSession): Promise<Sandbox> {
    if (hosted.sandbox?.alive) return Promise.resolve(hosted.sandbox);
    const { sessionId } = hosted.spec;
    let pending = this.creating.get(sessionId);
    if (!pending) {
      pending = this.create(hosted).finally(() => this.creating.delete(sessionId));
      this.creating.set(sessionId, pending);
    }
    return pending;
  }

  // After a run whose container died (OOM of the supervisor, a wedged timeout): drop it
  // and start the next one now, so the next run finds it ready; that run is told its
  // variables are gone.
  async replaceDead(hosted: HostedSession, dead: Sandbox): Promise<void> {
    if (hosted.sandbox === dead) hosted.sandbox = null;
    hosted.stateLostPending = true;
    await dead.destroy().catch(() => undefined);
    void this.ensure(hosted).catch((error: Error) =>
      this.logger.warn(`re-creating the sandbox of ${hosted.spec.sessionId} failed: ${error.message}`),
    );
  }

  // Destroys the session's sandbox and what it kept on the host (its `bind` folder).
  async release(hosted: HostedSession): Promise<void> {
    await hosted.sandbox?.destroy();
    if (hosted.spec.storage === 'bind') {
      await this.runtime
        .releaseSession(hosted.spec.sessionId)
        .catch((error: Error) => this.logger.warn(`removing the bind folder of ${hosted.spec.sessionId} failed: ${error.message}`));
    }
  }

  async destroyAll(all: HostedSession[]): Promise<void> {
    await Promise.allSettled(all.map((h) => h.sandbox?.destroy()));
  }

  // A hibernated session's sandbox from its checkpoint, or null (and its next run told
  // its state is lost) when that cannot be: missing, altered, of another tenant, refused
  // by the runtime. Never tried twice.
  private async resume(hosted: HostedSession, spec: SandboxSpec): Promise<Sandbox | null> {
    const checkpointId = hosted.resumeFrom!;
    hosted.resumeFrom = null;
    const started = performance.now();
    try {
      const { sandbox, checkpoint } = await this.checkpoints.restore(spec, checkpointId);
      // A fork: the snapshot's files become its thread's (its /session has them already).
      if (checkpoint.sessionId !== spec.sessionId && sandbox.listFiles) {
        const report = await sandbox.listFiles();
        await this.fileSync.pull(threadOf(spec), sandbox, fileStateOf(hosted, sandbox), report);
      }
      hosted.resumedMsPending = Math.round(performance.now() - started);
      await this.background
        .adopt(spec.tenantId, spec.sessionId, sandbox)
        .catch((error: Error) => this.logger.warn(`the processes of ${spec.sessionId} were not adopted: ${error.message}`));
      return sandbox;
    } catch (error) {
      const why = error instanceof CheckpointRestoreError ? error.message : `the runtime could not restore it: ${(error as Error).message}`;
      this.logger.warn(`session ${spec.sessionId} did not resume from ${checkpointId} (${why}); it starts afresh`);
      hosted.stateLostPending = true;
      hosted.stateLostReason = `The session's checkpoint could not be restored (${why}); it starts afresh.`;
      return null;
    }
  }

  // The session's sandbox restored from a checkpoint it just took (a snapshot), in place
  // of the one the checkpoint removed: its processes, files and mirror go on.
  async restoreFile(hosted: HostedSession, restoreFrom: string): Promise<Sandbox> {
    const spec = await this.sandboxSpecOf(hosted);
    const sandbox = await this.runtime.create(spec, { restoreFrom });
    if (!this.registry.isCurrent(hosted)) {
      await sandbox.destroy();
      throw SessionsError.ended(spec.sessionId);
    }
    if (hosted.files) hosted.files = { ...hosted.files, sandboxId: sandbox.id };
    hosted.sandbox = sandbox;
    await this.sessions.recordContainer(spec.tenantId, spec.sessionId, sandbox.id);
    await this.background
      .adopt(spec.tenantId, spec.sessionId, sandbox)
      .catch((error: Error) => this.logger.warn(`the processes of ${spec.sessionId} were not adopted: ${error.message}`));
    return sandbox;
  }

  private async sandboxSpecOf(hosted: HostedSession): Promise<SandboxSpec> {
    return { ...hosted.spec, workerId: this.config.worker.id, readOnlyMounts: await this.stager.readOnlyMounts(hosted.spec) };
  }

  private async create(hosted: HostedSession): Promise<Sandbox> {
    const { sessionId } = hosted.spec;
    if (hosted.sandbox) {
      hosted.stateLostPending = true;
      await hosted.sandbox.destroy().catch(() => undefined);
      hosted.sandbox = null;
    }
    const spec = await this.sandboxSpecOf(hosted);
    const sandbox = (hosted.resumeFrom ? await this.resume(hosted, spec) : null) ?? this.pool.take(spec) ?? (await this.runtime.create(spec));
    if (!this.registry.isCurrent(hosted)) {
      // Stopped while starting.
      await sandbox.destroy();
      throw SessionsError.ended(sessionId);
    }
    await this.stager.restage(hosted.spec, sandbox);
    hosted.sandbox = sandbox;
    await this.sessions.recordContainer(hosted.spec.tenantId, sessionId, sandbox.id);
    return sandbox;
  }
}
