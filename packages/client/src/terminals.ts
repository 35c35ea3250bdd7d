import { DrydockError } from './errors.js';
import { unwrap, type Transport } from './http.js';

// What the SDK needs of a WebSocket: the browser's, Node 22's global one, or the `ws`
// package's (Node 20 has none unless flagged).
export interface WebSocketLike {
  binaryType: string;
  readonly readyState: number;
  send(data: string | ArrayBuffer | Uint8Array): void;
  close(code?: number, reason?: string): void;
  onopen: ((event: unknown) => void) | null;
  onmessage: ((event: { data: unknown }) => void) | null;
  onclose: ((event: { code: number; reason: string }) => void) | null;
  onerror: ((event: unknown) => void) | null;
}
export type WebSocketConstructor = new (url: string) => WebSocketLike;

export interface TerminalOptions {
  // The window size (80 x 24 by default); change it later with resize.
  cols?: number;
  rows?: number;
  // The WebSocket to use; globalThis.WebSocket by default. In Node 20, pass the `ws`
  // package's: `import WebSocket from 'ws'`.
  WebSocket?: WebSocketConstructor;
  // What the terminal shows, as it comes.
  onData?: (bytes: Uint8Array) => void;
}

export interface TerminalExit {
  // Null when a signal ended the shell, or when it ended with its session or worker.
  exitCode: number | null;
  signal: string | null;
  // Why it ended, when the platform ended it.
  reason?: string;
}

const encoder = new TextEncoder();

// An interactive shell on a pseudo-terminal in the session's container (GET
// /v1/sessions/:id/pty): what you write is typed into it, what it shows comes to onData.
// `exited` resolves when the shell ends; close() hangs it up.
export class Terminal {
  // Resolves with how the shell ended; rejects when the connection failed first.
  readonly exited: Promise<TerminalExit>;
  private settle!: { resolve: (exit: TerminalExit) => void; reject: (error: Error) => void };
  private exit: TerminalExit | null = null;

  private constructor(
    private readonly socket: WebSocketLike,
    private readonly onData: (bytes: Uint8Array) => void,
  ) {
    this.exited = new Promise((resolve, reject) => (this.settle = { resolve, reject }));
    // Nobody awaiting `exited` must not make a failed connection an unhandled rejection.
    this.exited.catch(() => undefined);
  }

  // Asks for a one-use token with the tenant key, then opens the WebSocket with it: the
  // same way in a browser (which cannot send Authorization on a WebSocket) and in Node.
  static async open(http: Transport, sessionId: string, options: TerminalOptions = {}): Promise<Terminal> {
    const WebSocketImpl = options.WebSocket ?? (globalThis as { WebSocket?: WebSocketConstructor }).WebSocket;
    if (!WebSocketImpl) {
      throw new DrydockError('WEBSOCKET_UNAVAILABLE', "This runtime has no WebSocket: pass one as `WebSocket` (in Node 20, `import WebSocket from 'ws'`).", 0);
    }
    const { token } = await unwrap(http.api.POST('/v1/sessions/{id}/pty-tokens', { params: { path: { id: sessionId } } }));
    const query = new URLSearchParams({ cols: String(options.cols ?? 80), rows: String(options.rows ?? 24), token });
    const url = `${http.baseUrl.replace(/^http/, 'ws')}/v1/sessions/${encodeURIComponent(sessionId)}/pty?${query}`;
    const socket = new WebSocketImpl(url);
    socket.binaryType = 'arraybuffer';
    const terminal = new Terminal(socket, options.onData ?? (() => undefined));
    await terminal.connect();
    return terminal;
  }

  // Types `data` into the terminal (a string is sent as UTF-8): "ls\r" runs ls.
  write(data: string | Uint8Array): void {
    if (this.socket.readyState !== 1) return;
    this.socket.send(typeof data === 'string' ? encoder.encode(data) : data);
  }

  // The terminal's new window size (the program in front gets SIGWINCH).
  resize(cols: number, rows: number): void {
    if (this.socket.readyState === 1) this.socket.send(JSON.stringify({ type: 'resize', cols, rows }));
  }

  // Hangs the terminal up: SIGHUP to its shell (SIGKILL a few seconds later if it stays).
  close(): void {
    this.socket.close(1000);
  }

  private connect(): Promise<void> {
    return new Promise((resolve, reject) => {
      let open = false;
      this.socket.onopen = () => {
        open = true;
        resolve();
      };
      this.socket.onerror = () => undefined;
      this.socket.onmessage = (event) => this.onMessage(event.data);
      this.socket.onclose = (event) => {
        if (this.exit) return this.settle.resolve(this.exit);
        // The handshake's refusal is not readable from a WebSocket: the token request
        // answered the usual errors (unknown session, ended) already.
        const error = new DrydockError(
          open ? 'TERMINAL_CLOSED' : 'TERMINAL_REFUSED',
          open
            ? `The terminal's connection closed (${event.code}${event.reason ? `: ${event.reason}` : ''}) before its shell ended.`
            : 'The terminal could not be opened (the session may have 4 terminals open already, or its sandbox could not start).',
          0,
          { closeCode: event.code },
        );
        if (!open) reject(error);
        // A hang-up by close() is how the caller ends it: not a failure.
        if (open && event.code === 1000) this.settle.resolve({ exitCode: null, signal: 'SIGHUP', reason: 'The terminal was closed.' });
        else this.settle.reject(error);
      };
    });
  }

  private onMessage(data: unknown): void {
    if (typeof data !== 'string') {
      this.onData(data instanceof ArrayBuffer ? new Uint8Array(data) : new Uint8Array(data as ArrayLike<number>));
      return;
    }
    let message: { type?: string; exitCode?: number | null; signal?: string | null; reason?: string; code?: string; message?: string };
    try {
      message = JSON.parse(data) as typeof message;
    } catch {
      return;
    }
    if (message.type === 'exit') {
      this.exit = { exitCode: message.exitCode ?? null, signal: message.signal ?? null, ...(message.reason ? { reason: message.reason } : {}) };
    }
  }
}
