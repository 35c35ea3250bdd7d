import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, DrydockError, outageOf, type AppConfig } from '@drydock/core';
import {
  EXECUTIONS_REPOSITORY,
  failedRun,
  toExecutionView,
  type CompletedRun,
  type ExecuteJobData,
  type ExecutionsRepository,
  type ExecutionView,
  type OutputListener,
  type RunOutcome,
  type Sandbox,
  type SessionSpec,
} from '@drydock/execution';
import { PlatformMetrics, type ExecutionStage } from '@drydock/metrics';
import { SessionsError } from '@drydock/sessions';
import { ArtifactIngester } from '../artifacts/artifact-ingester.js';
import { SessionFileSync, type FileSyncState } from '../files/session-file-sync.js';
import { fileStateOf, threadOf, type HostedSession } from '../hosting/hosted-session.js';
import { HostedSessionRegistry } from '../hosting/hosted-session.registry.js';
import { SessionActivity } from '../lifecycle/session-activity.js';
import { SandboxProvisioner } from '../sandboxes/sandbox-provisioner.js';
import { BackgroundProcesses } from '../processes/background-processes.js';
import { CLAIM_MARGIN_MS, RUN_GUARD, runWindow, type RunGuard } from './run-guard.js';

const RUNNING_MARK_DELAY_MS = 50;
// Once the code has run, what it did is written down even across an outage of
// PostgreSQL (or Redis) this long: the outcome, the files it wrote, its artifacts are in
// this process's memory and in the sandbox, and would otherwise be lost, the execution
// left `running` for good.
const OUTAGE_PATIENCE_MS = 120_000;
// An interrupt for an execution that has not started here yet (its job still on its way,
// or waiting behind the session's run before it) is kept this long, for at most this
// many executions: when its job comes, the code is not run.
const EARLY_INTERRUPT_TTL_MS = 10 * 60_000;
const EARLY_INTERRUPTS_MAX = 10_000;

interface Prepared {
  sandbox: Sandbox;
  fileState: FileSyncState;
}

// One execution on the worker: claim it (at most one run per execution, whatever
// redelivers the job), bring the sandbox's files up to date, run the code, read back
// what it changed, ingest what it left in /session/artifacts, record the outcome.
// A typed error is thrown only when the code did not run (the session is unknown here
// or ended); every other failure is recorded as the run's outcome.
@Injectable()
export class ExecutionRunner {
  private readonly logger = new Logger(ExecutionRunner.name);
  // The sandbox of each execution whose code is running here.
  private readonly running = new Map<string, Sandbox>();
  // Executions interrupted before they started here: id -> when the interrupt came.
  private readonly interruptedEarly = new Map<string, number>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(EXECUTIONS_REPOSITORY) private readonly executions: ExecutionsRepository,
    @Inject(RUN_GUARD) private readonly guard: RunGuard,
    private readonly registry: HostedSessionRegistry,
    private readonly provisioner: SandboxProvisioner,
    private readonly fileSync: SessionFileSync,
    private readonly ingester: ArtifactIngester,
    private readonly activity: SessionActivity,
    private readonly metrics: PlatformMetrics,
    private readonly background: BackgroundProcesses,
  ) {}

  async execute(data: ExecuteJobData, onOutput?: OutputListener): Promise<ExecutionView> {
    const { tenantId, sessionId } = data.session;
    const hosted = await this.registry.acquire(data.session);
    return this.registry.serialize(hosted, async () => {
      // Stopped (deleted, reaped) while this job waited for the one before it.
      if (!this.registry.isCurrent(hosted)) throw SessionsError.ended(sessionId);
      const window = runWindow(data, this.config.worker.executionStartDeadlineMs);
      if (window.expired) return this.refuseExpired(data);
      // The run-once claim and the sandbox's preparation (usually one revision lookup)
      // go out together; the code runs only once both are done. Preparing for a job
      // that turns out to be redelivered is harmless: it only brings files up to date.
      // The execution's only dispatch (ExecuteJobData.onlyDispatch) needs no claim.
      const preparing = this.prepare(hosted, data.threadRevision);
      let claimed: boolean;
      try {
        claimed = data.onlyDispatch === true || (await this.guard.claim(data.executionId, window.holdMs));
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
      if (data.background && 'sandbox' in prepared) {
        clearTimeout(markTimer);
        await marking;
        return this.startBackground(prepared.sandbox, data);
      }
      let outcome: CompletedRun;
      try {
        if ('ended' in prepared) {
          // Claimed, never run: the record says why, the caller gets the typed error.
          await marking;
          await this.durably('recording', () => this.executions.complete(tenantId, data.executionId, prepared.ended.record));
          throw prepared.ended.error;
        }
        outcome = 'failed' in prepared ? prepared.failed : await this.run(hosted, data, prepared, onOutput);
      } finally {
        clearTimeout(markTimer);
      }
      await marking;
      const record = await this.durably('recording', () => this.executions.complete(tenantId, data.executionId, outcome));
      this.activity.mark(sessionId);
      return toExecutionView(record);
    });
  }

  // A live sandbox of the session holding its thread's current files, for what works
  // beside its runs (a terminal): prepared in the session's turn, as a run's would be.
  // Throws the typed error when the session ended or its sandbox could not be made ready.
  async readySandbox(spec: SessionSpec): Promise<Sandbox> {
    const hosted = await this.registry.acquire(spec);
    return this.registry.serialize(hosted, async () => {
      if (!this.registry.isCurrent(hosted)) throw SessionsError.ended(spec.sessionId);
      const prepared = await this.prepare(hosted);
      if ('ended' in prepared) throw prepared.ended.error;
      if ('failed' in prepared) throw new SessionsError('SANDBOX_UNAVAILABLE', prepared.failed.error?.value ?? 'The sandbox could not be made ready.', 503);
      this.activity.mark(spec.sessionId);
      return prepared.sandbox;
    });
  }

  // A background process: started after the thread's files are in, its execution
  // running until it ends (BackgroundProcesses). One that cannot start is recorded as
  // an error, and the caller gets the typed error.
  private async startBackground(sandbox: Sandbox, data: ExecuteJobData): Promise<ExecutionView> {
    const { tenantId } = data.session;
    if (this.interruptedEarly.delete(data.executionId)) {
      const record = await this.durably('recording', () =>
        this.executions.complete(tenantId, data.executionId, failedRun({ status: 'error', name: 'KeyboardInterrupt', value: 'The process was interrupted before it started.' })),
      );
      return toExecutionView(record);
    }
    try {
      return await this.background.start(sandbox, data);
    } catch (error) {
      const value = error instanceof DrydockError ? error.message : `The process could not be started: ${(error as Error).message}`;
      await this.durably('recording', () => this.executions.complete(tenantId, data.executionId, failedRun({ status: 'error', name: 'ProcessNotStarted', value })));
      throw error;
    }
  }

  // Stops the execution if its code runs here (the run ends as the code does on
  // KeyboardInterrupt, or killed), else makes sure it never starts here. Says whether
  // a running execution was asked to stop.
  interrupt(executionId: string): boolean {
    const sandbox = this.running.get(executionId);
    if (sandbox) return sandbox.interrupt(executionId);
    const now = Date.now();
    for (const [id, at] of this.interruptedEarly) {
      if (now - at < EARLY_INTERRUPT_TTL_MS && this.interruptedEarly.size < EARLY_INTERRUPTS_MAX) break;
      this.interruptedEarly.delete(id);
    }
    this.interruptedEarly.set(executionId, now);
    return false;
  }

  // A job that comes after its execution's start deadline (an idempotent retry of an
  // execution left unfinished, a job that waited behind others): the code is not run,
  // and an execution nobody finished is recorded as killed. One still held by a run
  // elsewhere (its claim lives) is left to that run.
  private async refuseExpired(data: ExecuteJobData): Promise<ExecutionView> {
    const { tenantId } = data.session;
    const minutes = Math.round(this.config.worker.executionStartDeadlineMs / 60_000);
    const outcome = failedRun({
      status: 'killed',
      name: 'ExecutionExpired',
      value: `The code was not run: the execution had not started within ${minutes} minutes of being submitted (EXECUTION_START_DEADLINE_MS).`,
    });
    const recorded = (await this.guard.claim(data.executionId, CLAIM_MARGIN_MS))
      ? await this.durably('recording', () => this.executions.completeUnfinished(tenantId, data.executionId, outcome))
      : null;
    return toExecutionView(recorded ?? (await this.executions.findById(tenantId, data.executionId))!);
  }

  // A sandbox that is alive and holds the thread's current files, or why the code
  // cannot run. Never rejects.
  private async prepare(
    hosted: HostedSession,
    threadRevision?: number,
  ): Promise<Prepared | { failed: CompletedRun } | { ended: { error: DrydockError; record: CompletedRun } }> {
    let sandbox: Sandbox;
    try {
      sandbox = await this.provisioner.ensure(hosted);
    } catch (error) {
      if (error instanceof DrydockError) {
        const record = failedRun({ status: 'killed', name: 'SessionEnded', value: error.message });
        return { ended: { error, record } };
      }
      return {
        failed: failedRun({
          status: 'killed',
          name: 'SandboxUnavailable',
          value: `The sandbox could not be started: ${(error as Error).message}`,
        }),
      };
    }
    const fileState = fileStateOf(hosted, sandbox);
    try {
      await this.timed('file_push', () => this.fileSync.push(threadOf(hosted.spec), sandbox, fileState, threadRevision));
    } catch (error) {
      // The code would see stale or missing files: it does not run. The next run
      // pushes again from the last revision that made it in whole.
      return {
        failed: failedRun({
          status: 'killed',
          name: 'FileSyncError',
          value: `The thread's files could not be copied into the sandbox, so the code did not run: ${(error as Error).message}`,
        }),
      };
    }
    return { sandbox, fileState };
  }

  private async run(hosted: HostedSession, data: ExecuteJobData, prepared: Prepared, onOutput?: OutputListener): Promise<CompletedRun> {
    const { sandbox, fileState } = prepared;
    const { spec } = hosted;
    if (this.interruptedEarly.delete(data.executionId)) {
      return failedRun({ status: 'error', name: 'KeyboardInterrupt', value: 'The execution was interrupted before its code ran.' });
    }
    this.running.set(data.executionId, sandbox);
    let outcome: RunOutcome;
    try {
      outcome = await this.timed('run', () =>
        sandbox.run(
          {
            id: data.executionId,
            code: data.code,
            ...(data.command ? { command: data.command } : {}),
            timeoutMs: data.timeoutMs,
            maxOutputBytes: spec.limits.maxOutputBytes,
          },
          onOutput,
        ),
      );
    } finally {
      this.running.delete(data.executionId);
    }
    outcome.stateLost = outcome.stateLost || hosted.stateLostPending;
    const stateLostReason = hosted.stateLostPending ? hosted.stateLostReason : null;
    hosted.stateLostPending = false;
    hosted.stateLostReason = null;
    const resumedMs = hosted.resumedMsPending;
    hosted.resumedMsPending = null;
    // Read back before anything else: a file the code wrote is in the thread the
    // moment the run is reported.
    const files = sandbox.alive
      ? await this.timed('file_pull', () =>
          this.durably('reading back the files', () => this.fileSync.pull(threadOf(spec), sandbox, fileState, outcome.files)),
        )
      : { changed: [], deleted: [], skipped: [] };
    const produced = sandbox.alive
      ? await this.timed('ingest', () =>
          this.durably('ingesting the artifacts', () =>
            this.ingester.ingest(
              sandbox,
              spec.tenantId,
              { threadId: spec.threadId, sessionId: spec.sessionId, executionId: data.executionId },
              outcome.artifacts,
            ),
          ),
        )
      : { artifacts: [], skipped: [] };
    if (!sandbox.alive) await this.provisioner.replaceDead(hosted, sandbox);
    const { artifacts: _listing, figures: _figures, trackingMs: _tracking, ...rest } = outcome;
    return { ...rest, files, artifacts: produced.artifacts, artifactsSkipped: produced.skipped, ...(resumedMs !== null ? { resumedMs } : {}), ...(stateLostReason ? { stateLostReason } : {}) };
  }

  // Runs `step` again while it fails because PostgreSQL or Redis is unavailable, for up
  // to OUTAGE_PATIENCE_MS (back-off up to 2 s); any other failure, or a longer outage,
  // is thrown as before.
  private async durably<T>(what: string, step: () => Promise<T>): Promise<T> {
    const deadline = Date.now() + OUTAGE_PATIENCE_MS;
    for (let wait = 100, warned = false; ; wait = Math.min(wait * 2, 2_000)) {
      try {
        return await step();
      } catch (error) {
        const outage = outageOf(error);
        if (!outage || Date.now() + wait > deadline) throw error;
        if (!warned) this.logger.warn(`${what} waits for ${outage} to come back: ${(error as Error).message}`);
        warned = true;
        await new Promise((r) => setTimeout(r, wait));
      }
    }
  }

  private async timed<T>(stage: ExecutionStage, step: () => Promise<T>): Promise<T> {
    const started = performance.now();
    try {
      return await step();
    } finally {
      this.metrics.stageSeconds.observe({ stage }, (performance.now() - started) / 1000);
    }
  }
}
