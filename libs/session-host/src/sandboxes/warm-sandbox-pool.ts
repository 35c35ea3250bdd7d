import { randomBytes } from 'node:crypto';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { SANDBOX_RUNTIME, type EffectiveLimits, type Sandbox, type SandboxRuntime, type SandboxSpec } from '@drydock/execution';

// What GET /admin/workers shows of one pool.
export interface PoolCounts {
  // How many started sandboxes the worker tries to keep.
  size: number;
  // Started, REPL ready, waiting for a session.
  ready: number;
  // Being started now.
  starting: number;
}

// What GET /admin/workers shows of a worker's pools: the platform image's
// (WORKER_POOL_SIZE) and one per template whose operators gave it a pool size.
export interface WarmPoolStatus extends PoolCounts {
  templates?: (PoolCounts & { template: string })[];
}

// A template's pool as the worker is told to keep it: its newest ready version.
export interface TemplatePoolTarget {
  // "name:version", for status and metrics.
  template: string;
  image: string;
  size: number;
}

type PooledSpec = Pick<SandboxSpec, 'limits' | 'storage' | 'readOnlyMounts' | 'image' | 'network' | 'tier'>;

// The limits that shape a container; the others (timeout, output) are per run.
const CONTAINER_LIMITS = ['memoryMb', 'cpus', 'pids', 'sessionDiskMb', 'tmpDiskMb'] as const;

const RETRY_MIN_MS = 1_000;
const RETRY_MAX_MS = 30_000;

// The sandboxes of one image.
class ImagePool {
  readonly ready: Sandbox[] = [];
  starting = 0;
  failures = 0;
  retryTimer: NodeJS.Timeout | null = null;
  closed = false;

  constructor(
    readonly image: string | undefined,
    public label: string,
    public size: number,
  ) {}

  get counts(): PoolCounts {
    return { size: this.size, ready: this.ready.length, starting: this.starting };
  }
}

// Started sandboxes for new sessions: a session start takes one instead of waiting for
// a container and its REPL, and the pool refills in the background. One pool for the
// platform image (WORKER_POOL_SIZE) and one per template an operator gave a pool size
// (its newest ready version's image; setTemplatePools).
//
// A pooled sandbox has the default limits, tmpfs storage and no dataset mount, and
// nothing of any tenant: it was started empty and has run nothing. Taking it hands it to
// one session for good; it is destroyed with that session, never put back. A template's
// pooled sandboxes serve only sessions of that image, which only tenants who can name
// the template have. A session the pools cannot serve (other limits, `bind` storage,
// dataset mounts, a network policy, an image without a pool) starts cold. A start that fails (Docker
// down, image missing) is retried with back-off, not in a loop.
@Injectable()
export class WarmSandboxPool {
  private readonly logger = new Logger(WarmSandboxPool.name);
  private readonly defaultPool: ImagePool;
  private readonly templatePools = new Map<string, ImagePool>();
  private open = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SANDBOX_RUNTIME) private readonly runtime: SandboxRuntime,
  ) {
    this.defaultPool = new ImagePool(undefined, 'default', config.worker.poolSize);
  }

  get status(): WarmPoolStatus {
    const templates = [...this.templatePools.values()].map((p) => ({ template: p.label, ...p.counts }));
    return { ...this.defaultPool.counts, ...(templates.length ? { templates } : {}) };
  }

  // Starts filling; called once the worker has cleared what a previous life left.
  start(): void {
    if (this.open) return;
    this.open = true;
    this.fill(this.defaultPool);
    for (const pool of this.templatePools.values()) this.fill(pool);
  }

  // The template pools to keep from now on: new ones fill, resized ones grow (or stop
  // refilling past their size), and those no longer wanted (pool size 0, a newer
  // version, a deleted template) have their waiting sandboxes destroyed.
  setTemplatePools(targets: TemplatePoolTarget[]): void {
    const wanted = new Map(targets.filter((t) => t.size > 0).map((t) => [t.image, t]));
    for (const [image, pool] of this.templatePools) {
      if (wanted.has(image)) continue;
      this.templatePools.delete(image);
      this.retire(pool);
    }
    for (const [image, target] of wanted) {
      let pool = this.templatePools.get(image);
      if (!pool) {
        pool = new ImagePool(image, target.template, target.size);
        this.templatePools.set(image, pool);
      }
      pool.size = target.size;
      pool.label = target.template;
      while (pool.ready.length > pool.size) void pool.ready.pop()!.destroy().catch(() => undefined);
      if (this.open) this.fill(pool);
    }
  }

  // Whether a session of this spec can take a pooled sandbox.
  serves(spec: PooledSpec): boolean {
    return this.poolFor(spec) !== null;
  }

  // A started sandbox for this session, now its own; null when no pool has one ready
  // for its spec (the caller starts one cold).
  take(spec: PooledSpec): Sandbox | null {
    const pool = this.poolFor(spec);
    if (!this.open || !pool) return null;
    let taken: Sandbox | null = null;
    while (!taken && pool.ready.length > 0) {
      const sandbox = pool.ready.shift()!;
      if (sandbox.alive) taken = sandbox;
      else void sandbox.destroy().catch(() => undefined);
    }
    this.fill(pool);
    return taken;
  }

  // Stops refilling and destroys the sandboxes waiting (a drain, a shutdown); one still
  // starting is destroyed when it is up.
  async close(): Promise<void> {
    this.open = false;
    const waiting: Sandbox[] = [];
    for (const pool of [this.defaultPool, ...this.templatePools.values()]) {
      if (pool.retryTimer) clearTimeout(pool.retryTimer);
      pool.retryTimer = null;
      waiting.push(...pool.ready.splice(0));
    }
    await Promise.allSettled(waiting.map((s) => s.destroy()));
  }

  private poolFor(spec: PooledSpec): ImagePool | null {
    const shaped =
      (spec.storage ?? 'tmpfs') === 'tmpfs' &&
      // The pools hold runc sandboxes only (a gvisor one starts cold).
      (spec.tier ?? 'runc') === 'runc' &&
      (spec.readOnlyMounts?.length ?? 0) === 0 &&
      // A sandbox with a network policy is started with the proxy's socket and settings.
      !spec.network &&
      CONTAINER_LIMITS.every((key) => spec.limits[key] === this.limits[key]);
    if (!shaped) return null;
    const pool = spec.image === undefined ? this.defaultPool : this.templatePools.get(spec.image);
    return pool && pool.size > 0 ? pool : null;
  }

  private retire(pool: ImagePool): void {
    pool.closed = true;
    if (pool.retryTimer) clearTimeout(pool.retryTimer);
    pool.retryTimer = null;
    for (const sandbox of pool.ready.splice(0)) void sandbox.destroy().catch(() => undefined);
  }

  private get limits(): EffectiveLimits {
    return this.config.defaultLimits;
  }

  private fill(pool: ImagePool): void {
    while (this.open && !pool.closed && !pool.retryTimer && pool.ready.length + pool.starting < pool.size) {
      pool.starting++;
      void this.startOne(pool).finally(() => {
        pool.starting--;
      });
    }
  }

  private async startOne(pool: ImagePool): Promise<void> {
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
        ...(pool.image ? { image: pool.image } : {}),
      });
    } catch (error) {
      this.failed(pool, error as Error);
      return;
    }
    pool.failures = 0;
    if (!this.open || pool.closed || pool.ready.length >= pool.size) {
      await sandbox.destroy().catch(() => undefined);
      return;
    }
    pool.ready.push(sandbox);
  }

  private failed(pool: ImagePool, error: Error): void {
    pool.failures++;
    if (!this.open || pool.closed || pool.retryTimer) return;
    const delay = Math.min(RETRY_MAX_MS, RETRY_MIN_MS * 2 ** (pool.failures - 1));
    if (pool.failures === 1 || delay === RETRY_MAX_MS) {
      this.logger.warn(`starting a pooled sandbox (${pool.label}) failed (${error.message}); retrying in ${delay} ms`);
    }
    pool.retryTimer = setTimeout(() => {
      pool.retryTimer = null;
      this.fill(pool);
    }, delay);
    pool.retryTimer.unref();
  }
}
