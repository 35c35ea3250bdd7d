import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { DrydockError, REDIS } from '@drydock/core';
import {
  EXECUTIONS_REPOSITORY,
  PROCESS_WATCH_LEASE_MS,
  processEventsChannel,
  ProcessRefusedError,
  toExecutionView,
  type ExecuteJobData,
  type ExecutionsRepository,
  type ExecutionView,
  type ProcessChannelMessage,
  type ProcessEvent,
  type ProcessOpJobData,
  type ProcessOutput,
  type Sandbox,
  type SandboxProcesses,
} from '@drydock/execution';
import { SessionsError } from '@drydock/sessions';
import { HostedSessionRegistry } from '../hosting/hosted-session.registry.js';

export class ProcessError extends DrydockError {
  static unsupported() {
    return new ProcessError('BACKGROUND_UNSUPPORTED', "This session's sandbox image cannot run background processes (its supervisor predates them): rebuild the sandbox image.", 422);
  }
  static limit(message: string) {
    return new ProcessError('PROCESS_LIMIT', `${message}; wait for one to end or signal one first.`, 429);
  }
  static notStarted(message: string) {
    return new ProcessError('PROCESS_NOT_STARTED', `The process could not be started: ${message}.`, 422);
  }
  static notRunning(processId: string) {
    return new ProcessError('PROCESS_NOT_RUNNING', `Process ${processId} is not running in its session's sandbox.`, 409);
  }
}

// The worker's side of background processes (API.md "Commands, processes and
// terminals"): starts them in the session's sandbox (from the execution runner, after
// the thread's files are in), records their pid and, when they end, their outcome on
// their execution row; relays their output to the gateways watching it
// (processEventsChannel) while their leases last, and answers their requests (ProcessOp).
@Injectable()
export class BackgroundProcesses {
  private readonly logger = new Logger(BackgroundProcesses.name);
  // Sandboxes whose events are listened to.
  private readonly listening = new WeakSet<SandboxProcesses>();
  // processId -> watch token -> lease expiry (ms since the epoch).
  private readonly watchers = new Map<string, Map<string, number>>();

  constructor(
    @Inject(EXECUTIONS_REPOSITORY) private readonly executions: ExecutionsRepository,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly registry: HostedSessionRegistry,
  ) {}

  // Starts the job's command as a background process of `sandbox`: its execution is
  // then `running` with its pid. A process that cannot start is a typed error (nothing
  // ran).
  async start(sandbox: Sandbox, data: ExecuteJobData): Promise<ExecutionView> {
    const { tenantId } = data.session;
    const processes = sandbox.processes;
    if (!processes) throw ProcessError.unsupported();
    this.listen(tenantId, processes);
    let pid: number;
    try {
      ({ pid } = await processes.start(data.executionId, data.command!));
    } catch (error) {
      if (error instanceof ProcessRefusedError) {
        if (error.reason === 'limit') throw ProcessError.limit(error.message);
        if (error.reason === 'unsupported') throw ProcessError.unsupported();
        throw ProcessError.notStarted(error.message);
      }
      throw error;
    }
    const record = await this.executions.markStarted(tenantId, data.executionId, pid);
    return toExecutionView(record ?? (await this.executions.findById(tenantId, data.executionId))!);
  }

  // A request of a gateway about one of this worker's processes.
  async handle(job: ProcessOpJobData): Promise<unknown> {
    const hosted = this.registry.get(job.session.sessionId);
    if (!hosted || hosted.spec.tenantId !== job.session.tenantId) throw SessionsError.notFound(job.session.sessionId);
    const processes = hosted.sandbox?.alive ? hosted.sandbox.processes : undefined;
    switch (job.op) {
      case 'read': {
        if (!processes) return { known: false, chunks: [], first: 0, exit: null } satisfies ProcessOutput;
        const watch = job.watchToken !== undefined;
        if (watch) this.lease(job.processId, job.watchToken!);
        return processes.read(job.processId, job.after, watch);
      }
      case 'unwatch': {
        const leases = this.watchers.get(job.processId);
        leases?.delete(job.watchToken);
        if (leases && leases.size === 0) {
          this.watchers.delete(job.processId);
          processes?.unwatch(job.processId);
        }
        return { ok: true };
      }
      case 'stdin': {
        if (!processes) throw ProcessError.notRunning(job.processId);
        const answer = await processes.writeStdin(job.processId, Buffer.from(job.data64, 'base64'), job.eof);
        if (answer.refused === 'unknown' || answer.refused === 'exited') throw ProcessError.notRunning(job.processId);
        return answer;
      }
      case 'signal': {
        if (!processes) throw ProcessError.notRunning(job.processId);
        return { delivered: await processes.signal(job.processId, job.signal) };
      }
    }
  }

  private lease(processId: string, token: string): void {
    let leases = this.watchers.get(processId);
    if (!leases) {
      leases = new Map();
      this.watchers.set(processId, leases);
    }
    leases.set(token, Date.now() + PROCESS_WATCH_LEASE_MS);
  }

  // A sandbox restored from a checkpoint: the session's processes that were running when
  // it was taken run on in it, and their ends are recorded as any process's.
  async adopt(tenantId: string, sessionId: string, sandbox: Sandbox): Promise<void> {
    const processes = sandbox.processes;
    if (!processes) return;
    processes.adopt(await this.executions.listRunningBackground(tenantId, sessionId));
    this.listen(tenantId, processes);
  }

  private listen(tenantId: string, processes: SandboxProcesses): void {
    if (this.listening.has(processes)) return;
    this.listening.add(processes);
    processes.onEvent((event) => void this.onEvent(tenantId, processes, event));
  }

  private async onEvent(tenantId: string, processes: SandboxProcesses, event: ProcessEvent): Promise<void> {
    const channel = processEventsChannel(event.processId);
    if (event.kind === 'chunk') {
      const leases = this.watchers.get(event.processId);
      const now = Date.now();
      for (const [token, expires] of leases ?? []) if (expires < now) leases!.delete(token);
      if (!leases || leases.size === 0) {
        // Nobody renewed: the gateways that watched are gone.
        this.watchers.delete(event.processId);
        processes.unwatch(event.processId);
        return;
      }
      const message: ProcessChannelMessage = { type: 'chunk', seq: event.seq, name: event.name, text: event.text };
      await this.redis.publish(channel, JSON.stringify(message)).catch(() => undefined);
      return;
    }
    this.watchers.delete(event.processId);
    const status = event.lost ? 'killed' : event.exitCode === 0 ? 'ok' : 'error';
    try {
      await this.executions.completeUnfinished(tenantId, event.processId, {
        status,
        stdout: event.stdout,
        stderr: event.stderr,
        truncated: event.truncated,
        result: null,
        error: event.lost ? { name: 'SandboxGone', value: `The process ended with its sandbox: ${event.lost}`, traceback: '' } : null,
        stateLost: false,
        durationMs: event.durationMs,
        cpuMs: null,
        exitCode: event.exitCode,
        signal: event.signal,
        files: { changed: [], deleted: [], skipped: [] },
        artifacts: [],
        artifactsSkipped: [],
      });
    } catch (error) {
      this.logger.warn(`recording the end of process ${event.processId} failed: ${(error as Error).message}`);
    }
    const message: ProcessChannelMessage = { type: 'exit', exitCode: event.exitCode, signal: event.signal, status };
    await this.redis.publish(channel, JSON.stringify(message)).catch(() => undefined);
  }
}
