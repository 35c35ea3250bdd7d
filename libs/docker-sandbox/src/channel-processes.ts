import { randomUUID } from 'node:crypto';
import {
  ProcessRefusedError,
  type BackgroundEvent,
  type CommandSpec,
  type ProcessEvent,
  type ProcessOutput,
  type ProcessSignal,
  type ReplRequest,
  type SandboxProcesses,
} from '@drydock/execution';

// The supervisor answers these within a frame's round trip; only a wedged one is late.
const ANSWER_TIMEOUT_MS = 10_000;

type Answer = Extract<BackgroundEvent, { id: string }>;

// The worker's side of a sandbox's background processes (the supervisor's
// background.py), over the sandbox's host channel: requests answered by id, chunks and
// exits passed to the listeners. When the sandbox goes, every process that had not
// ended is reported ended with it (`lost`).
export class ChannelProcesses implements SandboxProcesses {
  private readonly waiting = new Map<string, { resolve: (event: Answer) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  private readonly listeners = new Set<(event: ProcessEvent) => void>();
  private readonly live = new Map<string, number>();
  private gone: Error | null = null;

  constructor(private readonly send: (message: ReplRequest) => void) {}

  async start(processId: string, command: CommandSpec): Promise<{ pid: number }> {
    const answer = await this.ask(processId, () =>
      this.send({ op: 'exec', id: processId, command, background: true, timeoutMs: 1, maxOutputBytes: 0, stream: false }),
    );
    if (answer.ev === 'bg-refused') throw new ProcessRefusedError(answer.reason, answer.message);
    if (answer.ev !== 'bg-started') throw new Error(`the sandbox answered ${answer.ev} to a background start`);
    this.live.set(processId, Date.now());
    return { pid: answer.pid };
  }

  async read(processId: string, after: number, watch: boolean): Promise<ProcessOutput> {
    const answer = await this.request((id) => ({ op: 'bg-read', id, process: processId, after, watch }));
    if (answer.ev !== 'bg-output') throw new Error(`the sandbox answered ${answer.ev} to bg-read`);
    return { known: answer.known, chunks: answer.chunks, first: answer.first, exit: answer.exit };
  }

  unwatch(processId: string): void {
    if (!this.gone) this.send({ op: 'bg-unwatch', process: processId });
  }

  async writeStdin(processId: string, data: Buffer, eof: boolean): Promise<{ accepted: number; refused: string | null }> {
    const answer = await this.request((id) => ({ op: 'bg-stdin', id, process: processId, data64: data.toString('base64'), eof }));
    if (answer.ev !== 'bg-stdin-done') throw new Error(`the sandbox answered ${answer.ev} to bg-stdin`);
    return { accepted: answer.accepted, refused: answer.refused };
  }

  async signal(processId: string, signal: ProcessSignal): Promise<boolean> {
    const answer = await this.request((id) => ({ op: 'bg-signal', id, process: processId, signal }));
    if (answer.ev !== 'bg-signalled') throw new Error(`the sandbox answered ${answer.ev} to bg-signal`);
    return answer.delivered;
  }

  adopt(processIds: readonly string[]): void {
    for (const id of processIds) if (!this.live.has(id)) this.live.set(id, Date.now());
  }

  running(): string[] {
    return [...this.live.keys()];
  }

  onEvent(listener: (event: ProcessEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // From the sandbox's frame decoder: every bg-* event.
  onFrame(event: BackgroundEvent): void {
    if (event.ev === 'bg-chunk') {
      this.emit({ kind: 'chunk', processId: event.process, seq: event.seq, name: event.name, text: event.text });
      return;
    }
    if (event.ev === 'bg-exit') {
      this.live.delete(event.process);
      const { ev: _ev, process, ...rest } = event;
      this.emit({ kind: 'exit', processId: process, ...rest });
      return;
    }
    const waiter = this.waiting.get(event.id);
    if (!waiter) return;
    this.waiting.delete(event.id);
    clearTimeout(waiter.timer);
    waiter.resolve(event);
  }

  // The sandbox is gone: pending requests fail, and the processes ended with it.
  // `keepRunning`: the sandbox was checkpointed, its processes with it: they end with
  // nothing here (the restored sandbox adopts them).
  onGone(error: Error, keepRunning = false): void {
    if (this.gone) return;
    this.gone = error;
    if (keepRunning) this.live.clear();
    for (const waiter of this.waiting.values()) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.waiting.clear();
    for (const [processId, startedAt] of this.live) {
      this.emit({ kind: 'exit', processId, exitCode: null, signal: null, durationMs: Date.now() - startedAt, stdout: '', stderr: '', truncated: false, lost: error.message });
    }
    this.live.clear();
  }

  private request(build: (id: string) => ReplRequest): Promise<Answer> {
    const id = randomUUID();
    return this.ask(id, () => this.send(build(id)));
  }

  private ask(id: string, sendIt: () => void): Promise<Answer> {
    if (this.gone) return Promise.reject(this.gone);
    return new Promise<Answer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.waiting.delete(id);
        reject(new Error(`the sandbox did not answer in ${ANSWER_TIMEOUT_MS} ms`));
      }, ANSWER_TIMEOUT_MS);
      this.waiting.set(id, { resolve, reject, timer });
      sendIt();
    });
  }

  private emit(event: ProcessEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
