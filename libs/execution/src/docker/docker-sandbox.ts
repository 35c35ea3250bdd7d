import { PassThrough, type Duplex } from 'node:stream';
import type Docker from 'dockerode';
import {
  encodeFrame,
  FrameDecoder,
  type DoneFrame,
  type ReplEvent,
  type ReplRequest,
} from '../protocol/repl-protocol.js';
import {
  outcomeFromDone,
  type OutputListener,
  type RunOutcome,
  type RunRequest,
  type Sandbox,
} from '../runtime/sandbox-runtime.js';

interface PendingRun {
  id: string;
  resolve: (done: DoneFrame) => void;
  reject: (error: Error) => void;
  onOutput?: OutputListener;
}

export class SandboxGoneError extends Error {}

// One container and the REPL supervisor inside it, reached over the attached
// stdin/stdout: no `docker exec` on the hot path.
export class DockerSandbox implements Sandbox {
  private readonly decoder = new FrameDecoder();
  private pending: PendingRun | null = null;
  private readyWaiter: { resolve: () => void; reject: (e: Error) => void } | null = null;
  private isAlive = true;
  private exitReason: string | null = null;

  constructor(
    readonly id: string,
    private readonly container: Docker.Container,
    private readonly channel: Duplex,
    private readonly hardDeadlineSlackMs: number,
    // Removes what the sandbox owns besides its container (its /session volume).
    private readonly releaseResources: () => Promise<unknown> = async () => undefined,
  ) {}

  get alive(): boolean {
    return this.isAlive;
  }

  // Wires the demultiplexed stdout of the container to the frame decoder. Called once,
  // before the container starts, so the `ready` frame cannot be missed.
  attach(modem: { demuxStream: (s: Duplex, out: NodeJS.WritableStream, err: NodeJS.WritableStream) => void }): void {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    modem.demuxStream(this.channel, stdout, stderr);
    stdout.on('data', (chunk: Buffer) => this.onBytes(chunk));
    // The supervisor's own log lines; user output never travels here.
    stderr.resume();
    this.channel.on('end', () => this.onGone('the sandbox channel closed'));
    this.channel.on('close', () => this.onGone('the sandbox channel closed'));
    this.channel.on('error', (error) => this.onGone(`sandbox channel error: ${error.message}`));
  }

  waitReady(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.readyWaiter = null;
        reject(new SandboxGoneError(`the sandbox did not become ready within ${timeoutMs} ms`));
      }, timeoutMs);
      this.readyWaiter = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
    });
  }

  async run(request: RunRequest, onOutput?: OutputListener): Promise<RunOutcome> {
    if (!this.isAlive) throw new SandboxGoneError(this.exitReason ?? 'the sandbox is gone');
    if (this.pending) throw new Error('a run is already in progress on this sandbox');
    const started = performance.now();
    const done = new Promise<DoneFrame>((resolve, reject) => {
      this.pending = { id: request.id, resolve, reject, onOutput };
    });
    this.send({ op: 'exec', ...request });
    // The supervisor enforces the timeout itself; this deadline only fires when the
    // supervisor is wedged, in which case the container is killed.
    const deadlineMs = request.timeoutMs + this.hardDeadlineSlackMs;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => resolve('deadline'), deadlineMs);
    });
    try {
      const first = await Promise.race([done, deadline]);
      if (first === 'deadline') {
        this.pending = null;
        await this.kill('the sandbox did not answer after its timeout');
        return this.lostOutcome('timeout', started);
      }
      return outcomeFromDone(first);
    } catch (error) {
      if (error instanceof SandboxGoneError) {
        return this.lostOutcome(await this.exitStatus(), started);
      }
      throw error;
    } finally {
      clearTimeout(timer);
      this.pending = null;
    }
  }

  async destroy(): Promise<void> {
    // Fails a run in progress now rather than at its deadline.
    this.onGone('the sandbox was destroyed');
    try {
      this.channel.destroy();
    } catch {
      /* already closed */
    }
    await this.container.remove({ force: true }).catch((error: { statusCode?: number }) => {
      if (error.statusCode !== 404 && error.statusCode !== 409) throw error;
    });
    await this.releaseResources();
  }

  private send(message: ReplRequest): void {
    this.channel.write(encodeFrame(message));
  }

  private onBytes(chunk: Buffer): void {
    let events: ReplEvent[];
    try {
      events = this.decoder.push(chunk);
    } catch (error) {
      void this.kill(`bad frame from the sandbox: ${(error as Error).message}`);
      return;
    }
    for (const event of events) this.onEvent(event);
  }

  private onEvent(event: ReplEvent): void {
    switch (event.ev) {
      case 'ready':
        this.readyWaiter?.resolve();
        this.readyWaiter = null;
        return;
      case 'stream':
        if (this.pending?.id === event.id) this.pending.onOutput?.(event.name, event.text);
        return;
      case 'done':
        if (this.pending?.id === event.id) this.pending.resolve(event);
        return;
      default:
        return;
    }
  }

  private onGone(reason: string): void {
    if (!this.isAlive) return;
    this.isAlive = false;
    this.exitReason = reason;
    const error = new SandboxGoneError(reason);
    this.readyWaiter?.reject(error);
    this.readyWaiter = null;
    this.pending?.reject(error);
  }

  private async kill(reason: string): Promise<void> {
    this.onGone(reason);
    await this.container.kill().catch(() => undefined);
  }

  // Why the container stopped: the kernel's OOM killer or something else.
  private async exitStatus(): Promise<'memory' | 'killed'> {
    try {
      const info = await this.container.inspect();
      return info.State.OOMKilled ? 'memory' : 'killed';
    } catch {
      return 'killed';
    }
  }

  private lostOutcome(status: RunOutcome['status'], started: number): RunOutcome {
    const message =
      status === 'timeout'
        ? 'The code did not stop after its timeout; the sandbox was restarted.'
        : status === 'memory'
          ? 'The sandbox ran out of memory and was restarted.'
          : 'The sandbox stopped unexpectedly and was restarted.';
    return {
      status,
      stdout: '',
      stderr: '',
      truncated: false,
      result: null,
      error: { name: status === 'memory' ? 'MemoryError' : 'SandboxRestarted', value: message, traceback: '' },
      stateLost: false,
      durationMs: Math.round(performance.now() - started),
    };
  }
}
