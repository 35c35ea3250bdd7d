import { createHash, randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { DrydockError, newId, REDIS } from '@drydock/core';
import {
  JOB_DISPATCHER,
  JobName,
  TERMINAL_LEASE_MS,
  TERMINAL_PING_MS,
  terminalInputChannel,
  terminalOutputChannel,
  type JobDispatcher,
  type TerminalInputMessage,
  type TerminalOutputMessage,
  type TerminalSize,
} from '@drydock/execution';
import { SessionsError } from '../sessions.errors.js';
import { specOf, SessionsService } from '../sessions.service.js';

// A token lets a browser (which cannot set Authorization on a WebSocket) open one
// terminal of one session, once, within this long.
export const PTY_TOKEN_TTL_MS = 60_000;
// The shell starts once the thread's files are in the sandbox, which may need a
// container started first.
const OPEN_WAIT_MS = 90_000;
// What the shell shows before the client's socket is attached is kept up to this much.
const EARLY_OUTPUT_MAX_BYTES = 1 << 20;

export class TerminalsError extends DrydockError {
  static invalidToken() {
    return new TerminalsError('INVALID_PTY_TOKEN', 'The terminal token is unknown, expired, already used or for another session; ask for a new one with POST /v1/sessions/:id/pty-tokens.', 401);
  }
  static invalidSize() {
    return new TerminalsError('INVALID_TERMINAL_SIZE', '`cols` and `rows` must be whole numbers from 1 to 1000.', 400);
  }
}

// Where a terminal's output goes: the client's WebSocket.
export interface TerminalSink {
  output(data: Buffer): void;
  // The shell ended (`exitCode` null: by a signal, or with its sandbox or worker, then
  // `reason` says why). Called once; nothing follows.
  exit(end: { exitCode: number | null; signal: string | null; reason?: string }): void;
}

// A terminal opened in a session's sandbox, relayed through its worker.
export interface OpenedTerminal {
  readonly id: string;
  readonly pid: number;
  // Starts sending its output (what it showed since it opened first).
  attach(sink: TerminalSink): void;
  input(data: Buffer): void;
  resize(size: TerminalSize): void;
  // Hangs it up (SIGHUP to its shell); idempotent.
  close(): void;
}

export function terminalSizeOf(cols: unknown, rows: unknown): TerminalSize {
  const whole = (value: unknown) => (typeof value === 'string' && /^\d{1,4}$/.test(value) ? Number(value) : value);
  const c = whole(cols ?? 80);
  const r = whole(rows ?? 24);
  if (!Number.isInteger(c) || !Number.isInteger(r) || (c as number) < 1 || (r as number) < 1 || (c as number) > 1000 || (r as number) > 1000) {
    throw TerminalsError.invalidSize();
  }
  return { cols: c as number, rows: r as number };
}

function tokenKey(token: string): string {
  return `drydock:pty-token:${createHash('sha256').update(token).digest('hex')}`;
}

// The gateway's side of terminals (API.md "Commands, processes and terminals"): one-use
// tokens for browsers; opening a terminal on the session's worker (OpenTerminal, after
// the session is placed on a live worker) and relaying it over Redis pub/sub: typed
// bytes out on terminalInputChannel, what it shows back on terminalOutputChannel, a
// ping each TERMINAL_PING_MS both ways so that either side notices the other gone.
@Injectable()
export class SessionTerminalsService {
  private readonly logger = new Logger(SessionTerminalsService.name);

  constructor(
    @Inject(JOB_DISPATCHER) private readonly dispatcher: JobDispatcher,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly sessions: SessionsService,
  ) {}

  async createToken(tenantId: string, sessionId: string): Promise<{ token: string; expiresAt: string }> {
    const session = await this.sessions.get(tenantId, sessionId);
    if (session.status === 'ended') throw SessionsError.ended(sessionId);
    const token = `pty_${randomBytes(24).toString('base64url')}`;
    // Only a digest is stored: a read of Redis does not give working tokens.
    await this.redis.set(tokenKey(token), JSON.stringify({ tenantId, sessionId }), 'PX', PTY_TOKEN_TTL_MS);
    return { token, expiresAt: new Date(Date.now() + PTY_TOKEN_TTL_MS).toISOString() };
  }

  // The tenant a token was given to, for this session; the token is spent either way.
  async redeemToken(token: string, sessionId: string): Promise<string> {
    const raw = token.length <= 256 ? await this.redis.getdel(tokenKey(token)) : null;
    const claim = raw ? (JSON.parse(raw) as { tenantId: string; sessionId: string }) : null;
    if (!claim || claim.sessionId !== sessionId) throw TerminalsError.invalidToken();
    return claim.tenantId;
  }

  async open(tenantId: string, sessionId: string, size: TerminalSize): Promise<OpenedTerminal> {
    const session = await this.sessions.get(tenantId, sessionId);
    if (session.status === 'ended') throw SessionsError.ended(sessionId);
    const terminalId = newId('pty');
    const relay = new TerminalRelayClient(terminalId, this.dispatcher, this.logger);
    // Listening before the job goes: the shell's first prompt is not lost.
    await relay.listen();
    try {
      const { pid } = await this.sessions.onItsWorker(await this.sessions.ensurePlaced(session), (placed) =>
        this.dispatcher.dispatch<typeof JobName.OpenTerminal, { pid: number }>(
          placed.workerId,
          JobName.OpenTerminal,
          { session: specOf(placed), terminalId, cols: size.cols, rows: size.rows },
          { waitMs: OPEN_WAIT_MS },
        ),
      );
      relay.opened(pid);
      return relay;
    } catch (error) {
      await relay.stop();
      throw error;
    }
  }
}

// One terminal's relay on the gateway.
class TerminalRelayClient implements OpenedTerminal {
  pid = 0;
  private sink: TerminalSink | null = null;
  private early: Buffer[] = [];
  private earlyBytes = 0;
  private ended: Parameters<TerminalSink['exit']>[0] | null = null;
  private closed = false;
  private unsubscribe: (() => Promise<void>) | null = null;
  private pinger: NodeJS.Timeout | null = null;
  private heardAt = Date.now();

  constructor(
    readonly id: string,
    private readonly dispatcher: JobDispatcher,
    private readonly logger: Logger,
  ) {}

  async listen(): Promise<void> {
    this.unsubscribe = await this.dispatcher.subscribe(terminalOutputChannel(this.id), (message) => this.onMessage(message as TerminalOutputMessage));
  }

  opened(pid: number): void {
    this.pid = pid;
    this.heardAt = Date.now();
    this.pinger = setInterval(() => {
      if (Date.now() - this.heardAt > TERMINAL_LEASE_MS) {
        this.finish({ exitCode: null, signal: null, reason: "The terminal's worker stopped answering." });
        return;
      }
      this.send({ type: 'ping' });
    }, TERMINAL_PING_MS);
    this.pinger.unref();
  }

  attach(sink: TerminalSink): void {
    this.sink = sink;
    for (const chunk of this.early) sink.output(chunk);
    this.early = [];
    if (this.ended) sink.exit(this.ended);
  }

  input(data: Buffer): void {
    if (!this.ended && !this.closed) this.send({ type: 'input', data64: data.toString('base64') });
  }

  resize({ cols, rows }: TerminalSize): void {
    if (!this.ended && !this.closed) this.send({ type: 'resize', cols, rows });
  }

  close(): void {
    if (this.closed) return;
    this.closed = true;
    if (!this.ended) this.send({ type: 'close' });
    void this.stop();
  }

  async stop(): Promise<void> {
    if (this.pinger) clearInterval(this.pinger);
    this.pinger = null;
    const unsubscribe = this.unsubscribe;
    this.unsubscribe = null;
    await unsubscribe?.().catch(() => undefined);
  }

  private onMessage(message: TerminalOutputMessage): void {
    this.heardAt = Date.now();
    if (this.ended) return;
    switch (message.type) {
      case 'output': {
        const data = Buffer.from(message.data64, 'base64');
        if (this.sink) this.sink.output(data);
        else if (this.earlyBytes + data.length <= EARLY_OUTPUT_MAX_BYTES) {
          this.early.push(data);
          this.earlyBytes += data.length;
        }
        return;
      }
      case 'exit':
        this.finish({ exitCode: message.exitCode, signal: message.signal, ...(message.reason ? { reason: message.reason } : {}) });
        return;
      case 'pong':
        return;
    }
  }

  private finish(end: Parameters<TerminalSink['exit']>[0]): void {
    if (this.ended) return;
    this.ended = end;
    this.sink?.exit(end);
    void this.stop();
  }

  private send(message: TerminalInputMessage): void {
    this.dispatcher.publish(terminalInputChannel(this.id), message).catch((error: Error) => this.logger.warn(`terminal ${this.id}: ${error.message}`));
  }
}
