import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { SANDBOX_RUNTIME, type EffectiveLimits, type Sandbox, type SandboxRuntime, type SandboxSpec } from '@drydock/execution';

// What GET /admin/workers shows of a worker's pool.
export interface WarmPoolStatus {
  // WORKER_POOL_SIZE: how many started sandboxes the worker tries to keep.
  size: number;
  // Started, REPL ready, waiting for a session.
  ready: number;
  // Being started now.
  starting: number;
}

// The limits that shape a container; the others (timeout, output) are per run.
const CONTAINER_LIMITS = ['memoryMb', 'cpus', 'pids', 'sessionDiskMb', 'tmpDiskMb'] as const;

const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 30_000;

// Started sandboxes for new sessions (WORKER_POOL_SIZE): a session start takes one
// instead of waiting for a container and its REPL, and the pool refills in the
// background.
//
// A pooled sandbox has the default limits, tmpfs storage and no dataset mount, and
// nothing of any tenant: it was started empty and has run nothing. Taking it hands it to
// one session for good; it is destroyed with that session, never put back. A session
// the pool cannot serve (other limits, `bind` storage, dataset mounts, a template's
// image) starts cold.
// A start that fails (Docker down, image missing) is retried with back-off, not in a
// loop.
@Injectable()
export class WarmSandboxPool {
  private readonly logger = new Logger(WarmSandboxPool.name);
  private readonly ready: Sandbox[] = [];
  private starting = 0;
  private open = false;
  private failures = 0;
  private retryTimer: NodeJS.Timeout | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SANDBOX_RUNTIME) private readonly runtime: SandboxRuntime,
  ) {}

  get status(): WarmPoolStatus {
    return { size: this.size, ready: this.ready.length, starting: this.starting };
  }

  // Starts filling; called once the worker has cleared what a previous life left.
  start(): void {
    if (this.size === 0 || this.open) return;
    this.open = true;
    this.fill();
  }

  // Whether a session of this spec can take a pooled sandbox.
  serves(spec: Pick<SandboxSpec, 'limits' | 'storage' | 'readOnlyMounts' | 'image'>): boolean {
    return (
      spec.image === undefined &&
      (spec.storage ?? 'tmpfs') === 'tmpfs' &&
      (spec.readOnlyMounts?.length ?? 0) === 0 &&
      CONTAINER_LIMITS.every((key) => spec.limits[key] === this.limits[key])
    );
  }

  // A started sandbox for this session, now its own; null when the pool has none ready
  // or cannot serve the spec (the caller starts one cold).
  take(spec: Pick<SandboxSpec, 'limits' | 'storage' | 'readOnlyMounts' | 'image'>): Sandbox | null {
    if (!this.open || !this.serves(spec)) return null;
    let taken: Sandbox | null = null;
    while (!taken && this.ready.length > 0) {
      const sandbox = this.ready.shift()!;
      if (sandbox.alive) taken = sandbox;
      else void sandbox.destroy().catch(() => undefined);
    }
    this.fill();
    return taken;
  }

  // Stops refilling and destroys the sandboxes waiting (a drain, a shutdown); one still
  // starting is destroyed when it is up.
  async close(): Promise<void> {
    this.open = false;
    if (this.retryTimer) clearTimeout(this.retryTimer);
    this.retryTimer = null;
    const waiting = this.ready.splice(0);
    await Promise.allSettled(waiting.map((s) => s.destroy()));
  }

  private get size(): number {
    return this.config.worker.poolSize;
  }

  private get limits(): EffectiveLimits {
    return this.config.defaultLimits;
  }

  private fill(): void {
    while (this.open && !this.retryTimer && this.ready.length + this.starting < this.size) {
      this.starting++;
      void this.startOne().finally(() => {
        this.starting--;
      });
    }
  }

  private async startOne(): Promise<void> {
    let sandbox: Sandbox;
    try {
      sandbox = await this.runtime.create({
        // Labels and names only: a pooled sandbox belongs to no session or tenant yet.
        sessionId: `pool-${randomBytes(6).toString('hex')}`,
        tenantId: 'none',
        threadId: 'none',
        workerId: this.config.worker.id,
        limits: this.limits,
        storage: 'tmpfs',
      });
    } catch (error) {
      this.failed(error as Error);
      return;
    }
    this.failures = 0;
    if (!this.open) {
      await sandbox.destroy().catch(() => undefined);
      return;
    }
    this.ready.push(sandbox);
  }

  private failed(error: Error): void {
    this.failures++;
    if (!this.open || this.retryTimer) return;
    const delay = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (this.failures - 1));
    if (this.failures === 1 || delay === RETRY_MAX_MS) {
      this.logger.warn(`starting a pooled sandbox failed (${error.message}); retrying in ${delay} ms`);
    }
    this.retryTimer = setTimeout(() => {
      this.retryTimer = null;
      this.fill();
    }, delay);
    this.retryTimer.unref();
  }
}
