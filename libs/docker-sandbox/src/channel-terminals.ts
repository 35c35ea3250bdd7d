import {
  TerminalRefusedError,
  type ReplRequest,
  type SandboxTerminalEvent,
  type SandboxTerminals,
  type TerminalEvent,
  type TerminalSize,
} from '@drydock/execution';

// The supervisor answers a pty-open once the shell is exec'd: a frame's round trip and
// a fork.
const OPEN_TIMEOUT_MS = 10_000;

type OpenAnswer = Extract<TerminalEvent, { ev: 'pty-opened' | 'pty-refused' }>;

// The worker's side of a sandbox's terminals (the supervisor's terminals.py), over the
// sandbox's host channel: opens answered by id, output and exits passed to the
// listeners. When the sandbox goes, every terminal still open is reported ended with it
// (`lost`).
export class ChannelTerminals implements SandboxTerminals {
  private readonly opening = new Map<string, { resolve: (event: OpenAnswer) => void; reject: (error: Error) => void; timer: NodeJS.Timeout }>();
  private readonly listeners = new Set<(event: SandboxTerminalEvent) => void>();
  private readonly openIds = new Set<string>();
  private gone: Error | null = null;

  constructor(private readonly send: (message: ReplRequest) => void) {}

  async open(terminalId: string, { cols, rows }: TerminalSize): Promise<{ pid: number }> {
    if (this.gone) throw this.gone;
    const answer = await new Promise<OpenAnswer>((resolve, reject) => {
      const timer = setTimeout(() => {
        this.opening.delete(terminalId);
        reject(new Error(`the sandbox did not answer in ${OPEN_TIMEOUT_MS} ms`));
      }, OPEN_TIMEOUT_MS);
      this.opening.set(terminalId, { resolve, reject, timer });
      this.send({ op: 'pty-open', id: terminalId, cols, rows });
    });
    if (answer.ev === 'pty-refused') throw new TerminalRefusedError(answer.reason, answer.message);
    return { pid: answer.pid };
  }

  input(terminalId: string, data: Buffer): void {
    if (!this.gone && this.openIds.has(terminalId)) this.send({ op: 'pty-input', id: terminalId, data64: data.toString('base64') });
  }

  resize(terminalId: string, { cols, rows }: TerminalSize): void {
    if (!this.gone && this.openIds.has(terminalId)) this.send({ op: 'pty-resize', id: terminalId, cols, rows });
  }

  close(terminalId: string, force = false): void {
    if (!this.gone && this.openIds.has(terminalId)) this.send({ op: 'pty-close', id: terminalId, ...(force ? { force: true as const } : {}) });
  }

  onEvent(listener: (event: SandboxTerminalEvent) => void): () => void {
    this.listeners.add(listener);
    return () => this.listeners.delete(listener);
  }

  // From the sandbox's frame decoder: every pty-* event.
  onFrame(event: TerminalEvent): void {
    switch (event.ev) {
      case 'pty-output':
        this.emit({ kind: 'output', terminalId: event.id, data: Buffer.from(event.data64, 'base64') });
        return;
      case 'pty-exit':
        if (!this.openIds.delete(event.id)) return;
        this.emit({ kind: 'exit', terminalId: event.id, exitCode: event.exitCode, signal: event.signal });
        return;
      case 'pty-opened':
      case 'pty-refused': {
        const waiter = this.opening.get(event.id);
        if (!waiter) return;
        this.opening.delete(event.id);
        clearTimeout(waiter.timer);
        // Known as open before the answer is handed on: input sent right after the open
        // resolves is not dropped.
        if (event.ev === 'pty-opened') this.openIds.add(event.id);
        waiter.resolve(event);
        return;
      }
    }
  }

  // The sandbox is gone: opens in flight fail, and the terminals ended with it.
  onGone(error: Error): void {
    if (this.gone) return;
    this.gone = error;
    for (const waiter of this.opening.values()) {
      clearTimeout(waiter.timer);
      waiter.reject(error);
    }
    this.opening.clear();
    for (const terminalId of this.openIds) this.emit({ kind: 'exit', terminalId, exitCode: null, signal: null, lost: error.message });
    this.openIds.clear();
  }

  private emit(event: SandboxTerminalEvent): void {
    for (const listener of this.listeners) listener(event);
  }
}
