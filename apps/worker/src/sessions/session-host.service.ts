import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import {
  type CompletedRun,
  EXECUTIONS_REPOSITORY,
  RUN_GUARD,
  SANDBOX_RUNTIME,
  toExecutionView,
  type ExecuteJobData,
  type ExecutionsRepository,
  type ExecutionView,
  type OutputListener,
  type RunGuard,
  type RunOutcome,
  type Sandbox,
  type SandboxRuntime,
  type SandboxSpec,
  type SessionSpec,
  type StageDatasetJobData,
} from '@drydock/execution';
import { DatasetRegistry, SESSIONS_REPOSITORY, SessionsError, type SessionsRepository, type StagedDataset } from '@drydock/sessions';
import { ArtifactIngester } from './artifact-ingester.js';
import { newFileSyncState, SessionFileSync, type FileSyncState } from './session-file-sync.js';

const RUNNING_MARK_DELAY_MS = 50;

interface Prepared {
  sandbox: Sandbox;
  fileState: FileSyncState;
}

interface HostedSession {
  spec: SessionSpec;
  sandbox: Sandbox | null;
  lastUsed: number;
  busy: boolean;
  // The next run must report that the interpreter's variables were lost.
  stateLostPending: boolean;
  // Runs of one session are strictly sequential.
  tail: Promise<unknown>;
  // The file mirror of the current sandbox (reset with every new sandbox).
  files: FileSyncState | null;
}

// Holds this worker's sessions: one container each, created on demand, re-created
// after a crash or a wedged timeout, destroyed when idle or deleted.
@Injectable()
export class SessionHostService {
  private readonly logger = new Logger(SessionHostService.name);
  private readonly hosted = new Map<string, HostedSession>();
  // Sessions used since the last flush; their last_used_at is written in one batch.
  private active = new Set<string>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SANDBOX_RUNTIME) private readonly runtime: SandboxRuntime,
    @Inject(SESSIONS_REPOSITORY) private readonly sessions: SessionsRepository,
    @Inject(EXECUTIONS_REPOSITORY) private readonly executions: ExecutionsRepository,
    @Inject(RUN_GUARD) private readonly guard: RunGuard,
    private readonly fileSync: SessionFileSync,
    private readonly ingester: ArtifactIngester,
    private readonly datasets: DatasetRegistry,
  ) {}

  get size(): number {
    return this.hosted.size;
  }

  sessionIds(): ReadonlySet<string> {
    return new Set(this.hosted.keys());
  }

  async start(spec: SessionSpec): Promise<{ sessionId: string; containerId: string }> {
    const hosted = await this.entry(spec);
    return this.serialize(hosted, async () => {
      const sandbox = await this.ensureSandbox(hosted);
      // A new session starts with the thread's files in place. Should this fail, the
      // first run pushes again (and reports a failure to the caller).
      await this.fileSync
        .push(threadOf(spec), sandbox, this.fileState(hosted, sandbox))
        .catch((error: Error) => this.logger.warn(`pushing files into ${spec.sessionId} failed: ${error.message}`));
      return { sessionId: spec.sessionId, containerId: sandbox.id };
    });
  }

  async execute(data: ExecuteJobData, onOutput?: OutputListener): Promise<ExecutionView> {
    const { tenantId } = data.session;
    const hosted = await this.entry(data.session);
    return this.serialize(hosted, async () => {
      // The run-once claim and the sandbox's preparation (usually one revision lookup)
      // go out together; the code runs only once both are done. Preparing for a job
      // that turns out to be redelivered is harmless: it only brings files up to date.
      const preparing = this.prepare(hosted);
      let claimed: boolean;
      try {
        claimed = await this.guard.claim(data.executionId);
      } finally {
        await preparing;
      }
      // A redelivered job finds its execution already claimed and returns its record.
      if (!claimed) {
        const existing = await this.executions.findById(tenantId, data.executionId);
        return toExecutionView(existing!);
      }
      // The `running` mark is for observers of long runs; a run that is over within
      // RUNNING_MARK_DELAY_MS goes from queued to finished in one write.
      let marking: Promise<unknown> | undefined;
      const markTimer = setTimeout(() => {
        marking = this.executions.markRunning(tenantId, data.executionId).catch((error: Error) =>
          this.logger.warn(`marking ${data.executionId} running failed: ${error.message}`),
        );
      }, RUNNING_MARK_DELAY_MS);
      const prepared = await preparing;
      let outcome: CompletedRun;
      try {
        outcome = 'failed' in prepared ? prepared.failed : await this.run(hosted, data, prepared, onOutput);
      } finally {
        clearTimeout(markTimer);
      }
      await marking;
      const record = await this.executions.complete(tenantId, data.executionId, outcome);
      this.active.add(data.session.sessionId);
      return toExecutionView(record);
    });
  }

  // Copies a dataset into /session/data/<name> of the running sandbox, between runs.
  async stageDataset(data: StageDatasetJobData): Promise<StagedDataset> {
    const hosted = await this.entry(data.session);
    // The spec now lists the dataset, so a re-created container stages it again.
    hosted.spec = data.session;
    return this.serialize(hosted, async () => {
      const sandbox = await this.ensureSandbox(hosted);
      return this.stage(hosted.spec.tenantId, sandbox, data.name);
    });
  }

  async stop(sessionId: string): Promise<void> {
    const hosted = this.hosted.get(sessionId);
    if (!hosted) return;
    this.hosted.delete(sessionId);
    await hosted.sandbox?.destroy();
    if (hosted.spec.storage === 'bind') {
      await this.runtime
        .releaseSession(sessionId)
        .catch((error: Error) => this.logger.warn(`removing the bind folder of ${sessionId} failed: ${error.message}`));
    }
  }

  // Ends sessions nobody used for the configured idle time.
  async reapIdle(now = Date.now()): Promise<string[]> {
    const reaped: string[] = [];
    for (const [sessionId, hosted] of this.hosted) {
      if (hosted.busy || now - hosted.lastUsed < this.config.worker.sessionIdleMs) continue;
      await this.stop(sessionId);
      await this.sessions.end(hosted.spec.tenantId, sessionId, 'idle');
      reaped.push(sessionId);
    }
    // Sessions placed here whose container never came back (e.g. after a restart).
    for (const session of await this.sessions.listLiveOnWorker(this.config.worker.id)) {
      if (this.hosted.has(session.id)) continue;
      if (now - new Date(session.lastUsedAt).getTime() >= this.config.worker.sessionIdleMs) {
        await this.sessions.end(session.tenantId, session.id, 'idle');
        reaped.push(session.id);
      }
    }
    return reaped;
  }

  async flushActivity(): Promise<void> {
    if (this.active.size === 0) return;
    const ids = [...this.active];
    this.active = new Set();
    await this.sessions.touchMany(ids);
  }

  async shutdown(): Promise<void> {
    await this.flushActivity().catch(() => undefined);
    const all = [...this.hosted.values()];
    this.hosted.clear();
    await Promise.allSettled(all.map((h) => h.sandbox?.destroy()));
  }

  // A sandbox that is alive and holds the thread's current files, or why the code
  // cannot run. Never throws.
  private async prepare(hosted: HostedSession): Promise<Prepared | { failed: CompletedRun }> {
    let sandbox: Sandbox;
    try {
      sandbox = await this.ensureSandbox(hosted);
    } catch (error) {
      return { failed: failedOutcome('SandboxUnavailable', `The sandbox could not be started: ${(error as Error).message}`) };
    }
    const fileState = this.fileState(hosted, sandbox);
    try {
      await this.fileSync.push(threadOf(hosted.spec), sandbox, fileState);
    } catch (error) {
      // The code would see stale or missing files: it does not run. The next run
      // pushes again from the last revision that made it in whole.
      return {
        failed: failedOutcome(
          'FileSyncError',
          `The thread's files could not be copied into the sandbox, so the code did not run: ${(error as Error).message}`,
        ),
      };
    }
    return { sandbox, fileState };
  }

  private async run(hosted: HostedSession, data: ExecuteJobData, prepared: Prepared, onOutput?: OutputListener): Promise<CompletedRun> {
    const { sandbox, fileState } = prepared;
    const scope = threadOf(hosted.spec);
    const outcome: RunOutcome = await sandbox.run(
      {
        id: data.executionId,
        code: data.code,
        timeoutMs: data.timeoutMs,
        maxOutputBytes: hosted.spec.limits.maxOutputBytes,
      },
      onOutput,
    );
    outcome.stateLost = outcome.stateLost || hosted.stateLostPending;
    hosted.stateLostPending = false;
    // Read back before anything else: a file the code wrote is in the thread the
    // moment the run is reported.
    const files = sandbox.alive
      ? await this.fileSync.pull(scope, sandbox, fileState, outcome.files)
      : emptyFiles();
    const produced = sandbox.alive
      ? await this.ingester.ingest(
          sandbox,
          hosted.spec.tenantId,
          { threadId: hosted.spec.threadId, sessionId: hosted.spec.sessionId, executionId: data.executionId },
          outcome.artifacts,
        )
      : { artifacts: [], skipped: [] };
    if (!sandbox.alive) {
      // The container died (OOM of the supervisor, a wedged timeout): replace it now so
      // the next run finds a fresh one, and tell that run its variables are gone.
      hosted.sandbox = null;
      hosted.stateLostPending = true;
      await sandbox.destroy().catch(() => undefined);
      void this.ensureSandbox(hosted).catch((error: Error) =>
        this.logger.warn(`re-creating the sandbox of ${hosted.spec.sessionId} failed: ${error.message}`),
      );
    }
    const { artifacts: _listing, figures: _figures, trackingMs: _tracking, ...rest } = outcome;
    return { ...rest, files, artifacts: produced.artifacts, artifactsSkipped: produced.skipped };
  }

  private fileState(hosted: HostedSession, sandbox: Sandbox): FileSyncState {
    if (hosted.files?.sandboxId !== sandbox.id) hosted.files = newFileSyncState(sandbox.id);
    return hosted.files;
  }

  private async entry(spec: SessionSpec): Promise<HostedSession> {
    let hosted = this.hosted.get(spec.sessionId);
    if (!hosted) {
      const row = await this.sessions.findById(spec.tenantId, spec.sessionId);
      if (!row) throw SessionsError.notFound(spec.sessionId);
      if (row.status === 'ended') throw SessionsError.ended(spec.sessionId);
      hosted = this.hosted.get(spec.sessionId) ?? {
        spec,
        sandbox: null,
        lastUsed: Date.now(),
        busy: false,
        // It had a container before, on this worker's previous life or another worker.
        stateLostPending: row.containerId !== null,
        tail: Promise.resolve(),
        files: null,
      };
      this.hosted.set(spec.sessionId, hosted);
    }
    return hosted;
  }

  private creating = new Map<string, Promise<Sandbox>>();

  private async ensureSandbox(hosted: HostedSession): Promise<Sandbox> {
    if (hosted.sandbox?.alive) return hosted.sandbox;
    const { sessionId } = hosted.spec;
    let pending = this.creating.get(sessionId);
    if (!pending) {
      pending = (async () => {
        if (hosted.sandbox) {
          hosted.stateLostPending = true;
          await hosted.sandbox.destroy().catch(() => undefined);
          hosted.sandbox = null;
        }
        const sandbox = await this.runtime.create(await this.sandboxSpec(hosted.spec));
        if (this.hosted.get(sessionId) !== hosted) {
          // Stopped while starting.
          await sandbox.destroy();
          throw SessionsError.ended(sessionId);
        }
        for (const dataset of hosted.spec.datasets ?? []) {
          if (dataset.mode !== 'staged') continue;
          // Checked when the session asked for it; should the operator have changed or
          // removed it since, the session still starts, without that copy.
          await this.stage(hosted.spec.tenantId, sandbox, dataset.name).catch((error: Error) =>
            this.logger.warn(`re-staging dataset ${dataset.name} into ${sessionId} failed: ${error.message}`),
          );
        }
        hosted.sandbox = sandbox;
        await this.sessions.recordContainer(hosted.spec.tenantId, sessionId, sandbox.id);
        return sandbox;
      })().finally(() => this.creating.delete(sessionId));
      this.creating.set(sessionId, pending);
    }
    return pending;
  }

  // Read-only datasets are resolved here, on the host that mounts them.
  private async sandboxSpec(spec: SessionSpec): Promise<SandboxSpec> {
    const readOnlyMounts: SandboxSpec['readOnlyMounts'] = [];
    for (const dataset of spec.datasets ?? []) {
      if (dataset.mode !== 'local_ro') continue;
      const { hostPath } = await this.datasets.resolve(spec.tenantId, dataset.name);
      readOnlyMounts.push({ name: dataset.name, hostPath });
    }
    return { ...spec, workerId: this.config.worker.id, readOnlyMounts };
  }

  private async stage(tenantId: string, sandbox: Sandbox, name: string): Promise<StagedDataset> {
    const files = await this.datasets.filesOf(await this.datasets.resolve(tenantId, name));
    // Under /session/data/<name>, as files of the session; they are not thread files
    // unless the code changes them.
    await sandbox.putFiles(files);
    return { name, mode: 'staged', files: files.length, bytes: files.reduce((sum, f) => sum + f.content.length, 0) };
  }

  private serialize<T>(hosted: HostedSession, task: () => Promise<T>): Promise<T> {
    const next = hosted.tail.then(async () => {
      hosted.busy = true;
      try {
        return await task();
      } finally {
        hosted.busy = false;
        hosted.lastUsed = Date.now();
      }
    });
    hosted.tail = next.catch(() => undefined);
    return next;
  }
}

function threadOf(spec: SessionSpec): { tenantId: string; threadId: string } {
  return { tenantId: spec.tenantId, threadId: spec.threadId };
}

function emptyFiles(): CompletedRun['files'] {
  return { changed: [], deleted: [], skipped: [] };
}

function failedOutcome(name: string, value: string): CompletedRun {
  return {
    status: 'killed',
    stdout: '',
    stderr: '',
    truncated: false,
    result: null,
    error: { name, value, traceback: '' },
    stateLost: false,
    durationMs: 0,
    files: emptyFiles(),
    artifacts: [],
    artifactsSkipped: [],
  };
}
