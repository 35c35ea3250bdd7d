import { Inject, Injectable, Logger, type OnModuleDestroy } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG, createRedis, DrydockError, REDIS, type AppConfig } from '@drydock/core';
import {
  TERMINAL_LEASE_MS,
  terminalInputChannel,
  terminalOutputChannel,
  TerminalRefusedError,
  type OpenTerminalJobData,
  type SandboxTerminalEvent,
  type SandboxTerminals,
  type TerminalInputMessage,
  type TerminalOutputMessage,
} from '@drydock/execution';
import { PlatformMetrics } from '@drydock/metrics';
import { HostedSessionRegistry } from '../hosting/hosted-session.registry.js';
import { SessionActivity } from '../lifecycle/session-activity.js';
import { ExecutionRunner } from '../runs/execution-runner.js';

export class TerminalError extends DrydockError {
  static unsupported() {
    return new TerminalError('TERMINALS_UNSUPPORTED', "This session's sandbox image cannot open terminals (its supervisor predates them): rebuild the sandbox image.", 422);
  }
  static limit(message: string) {
    return new TerminalError('TERMINAL_LIMIT', `${message}; close one first.`, 429);
  }
  static notOpened(message: string) {
    return new TerminalError('TERMINAL_NOT_OPENED', `The terminal could not be opened: ${message}.`, 422);
  }
}

interface Relayed {
  sessionId: string;
  terminals: SandboxTerminals;
  heardAt: number;
  // Set once hung up: a shell still there after HANGUP_GRACE_MS (one that ignores
  // SIGHUP) is killed with all of its session.
  hungUp?: NodeJS.Timeout;
}

const LEASE_CHECK_MS = 5_000;
const HANGUP_GRACE_MS = 3_000;

// The worker's side of terminals (API.md "Commands, processes and terminals"): opens
// one in the session's sandbox once its thread's files are in, then relays it: what the
// gateway holding its WebSocket sends (terminalInputChannel) goes to the sandbox, what
// the terminal shows goes back (terminalOutputChannel), until the shell exits, the
// gateway hangs up, or nothing is heard for TERMINAL_LEASE_MS (the gateway gone).
@Injectable()
export class TerminalRelay implements OnModuleDestroy {
  private readonly logger = new Logger(TerminalRelay.name);
  private subscriber: Redis | null = null;
  private readonly relayed = new Map<string, Relayed>();
  private readonly listening = new WeakSet<SandboxTerminals>();
  private leaseTimer: NodeJS.Timeout | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly runner: ExecutionRunner,
    private readonly registry: HostedSessionRegistry,
    private readonly activity: SessionActivity,
    private readonly metrics: PlatformMetrics,
  ) {}

  async open(job: OpenTerminalJobData): Promise<{ pid: number }> {
    const sandbox = await this.runner.readySandbox(job.session);
    const terminals = sandbox.terminals;
    if (!terminals) throw TerminalError.unsupported();
    this.listen(terminals);
    // Listening before the shell starts: what the client types at once is not lost.
    const entry: Relayed = { sessionId: job.session.sessionId, terminals, heardAt: Date.now() };
    this.relayed.set(job.terminalId, entry);
    await this.ensureSubscriber().subscribe(terminalInputChannel(job.terminalId));
    try {
      const { pid } = await terminals.open(job.terminalId, { cols: job.cols, rows: job.rows });
      this.metrics.terminalOpened();
      this.ensureLeaseTimer();
      return { pid };
    } catch (error) {
      await this.forget(job.terminalId);
      if (error instanceof TerminalRefusedError) {
        if (error.reason === 'limit') throw TerminalError.limit(error.message);
        throw TerminalError.notOpened(error.message);
      }
      throw error;
    }
  }

  async onModuleDestroy(): Promise<void> {
    if (this.leaseTimer) clearInterval(this.leaseTimer);
    this.leaseTimer = null;
    for (const [terminalId, entry] of this.relayed) {
      clearTimeout(entry.hungUp);
      entry.terminals.close(terminalId, true);
    }
    await this.subscriber?.quit().catch(() => undefined);
    this.subscriber = null;
  }

  private onInput(terminalId: string, raw: string): void {
    const entry = this.relayed.get(terminalId);
    if (!entry) return;
    entry.heardAt = Date.now();
    let message: TerminalInputMessage;
    try {
      message = JSON.parse(raw) as TerminalInputMessage;
    } catch {
      return;
    }
    switch (message.type) {
      case 'input':
        this.used(entry.sessionId);
        entry.terminals.input(terminalId, Buffer.from(message.data64, 'base64'));
        return;
      case 'resize':
        entry.terminals.resize(terminalId, { cols: message.cols, rows: message.rows });
        return;
      case 'close':
        this.hangUp(terminalId, entry);
        return;
      case 'ping':
        this.publish(terminalId, { type: 'pong' });
        return;
    }
  }

  private listen(terminals: SandboxTerminals): void {
    if (this.listening.has(terminals)) return;
    this.listening.add(terminals);
    terminals.onEvent((event) => this.onEvent(event));
  }

  private onEvent(event: SandboxTerminalEvent): void {
    const entry = this.relayed.get(event.terminalId);
    if (!entry) return;
    if (event.kind === 'output') {
      this.used(entry.sessionId);
      this.publish(event.terminalId, { type: 'output', data64: event.data.toString('base64') });
      return;
    }
    this.publish(event.terminalId, {
      type: 'exit',
      exitCode: event.exitCode,
      signal: event.signal,
      ...(event.lost ? { reason: `The session's sandbox went: ${event.lost}` } : {}),
    });
    void this.forget(event.terminalId);
  }

  // A terminal in use keeps its session from being reaped as idle, as a run does.
  private used(sessionId: string): void {
    const hosted = this.registry.get(sessionId);
    if (hosted) hosted.lastUsed = Date.now();
    this.activity.mark(sessionId);
  }

  private publish(terminalId: string, message: TerminalOutputMessage): void {
    void this.redis.publish(terminalOutputChannel(terminalId), JSON.stringify(message)).catch(() => undefined);
  }

  private hangUp(terminalId: string, entry: Relayed): void {
    if (entry.hungUp) return;
    entry.terminals.close(terminalId);
    entry.hungUp = setTimeout(() => entry.terminals.close(terminalId, true), HANGUP_GRACE_MS);
    entry.hungUp.unref();
  }

  private async forget(terminalId: string): Promise<void> {
    const entry = this.relayed.get(terminalId);
    if (!entry) return;
    clearTimeout(entry.hungUp);
    this.relayed.delete(terminalId);
    await this.subscriber?.unsubscribe(terminalInputChannel(terminalId)).catch(() => undefined);
  }

  // Hangs up the terminals whose gateway stopped pinging.
  private ensureLeaseTimer(): void {
    if (this.leaseTimer) return;
    this.leaseTimer = setInterval(() => {
      const now = Date.now();
      for (const [terminalId, entry] of this.relayed) {
        if (now - entry.heardAt < TERMINAL_LEASE_MS) continue;
        this.logger.log(`terminal ${terminalId} of session ${entry.sessionId} hung up: nothing heard from its gateway for ${TERMINAL_LEASE_MS} ms`);
        this.hangUp(terminalId, entry);
        entry.heardAt = now;
      }
      if (this.relayed.size === 0 && this.leaseTimer) {
        clearInterval(this.leaseTimer);
        this.leaseTimer = null;
      }
    }, LEASE_CHECK_MS);
    this.leaseTimer.unref();
  }

  private ensureSubscriber(): Redis {
    if (!this.subscriber) {
      this.subscriber = createRedis(this.config.redisUrl, 'drydock-worker-terminals');
      const prefix = terminalInputChannel('');
      this.subscriber.on('message', (channel: string, message: string) => {
        if (channel.startsWith(prefix)) this.onInput(channel.slice(prefix.length), message);
      });
    }
    return this.subscriber;
  }
}
