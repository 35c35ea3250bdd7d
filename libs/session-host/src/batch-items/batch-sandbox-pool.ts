import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { SANDBOX_RUNTIME, type Sandbox, type SandboxRuntime } from '@drydock/execution';
import type { StartedItem } from '@drydock/batches';
import { WorkerEgress } from '../egress/worker-egress.js';

// A sandbox serves at most this many items before it is replaced.
const MAX_USES = 200;
// An idle sandbox of a batch that no item of it asks for within this time is destroyed.
const IDLE_MS = 5_000;

interface Idle {
  // Resolves once recycled: the sandbox, or null when it was not clean (destroyed).
  ready: Promise<Sandbox | null>;
  uses: number;
  key: string;
}

export interface Lease {
  sandbox: Sandbox;
  uses: number;
  // The sessionId the sandbox was created with: the egress proxy knows it by this.
  key: string;
}

// The sandboxes batch items run in on this worker. With BATCH_RECYCLE_SANDBOXES (the
// default) a sandbox is kept for the next item of the same batch (same tenant, same
// limits) after the supervisor recycled it: every process of the sandbox user killed,
// /session, /tmp, /dev/shm and /dev/mqueue emptied, System V IPC removed, a fresh
// interpreter, and all of that checked. A sandbox that is not clean, or has served
// MAX_USES items, is destroyed; items of different batches never share one.
@Injectable()
export class BatchSandboxPool {
  private readonly logger = new Logger(BatchSandboxPool.name);
  private readonly idle = new Map<string, Idle[]>();
  private readonly timers = new Map<string, NodeJS.Timeout>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SANDBOX_RUNTIME) private readonly runtime: SandboxRuntime,
    private readonly egress: WorkerEgress,
  ) {}

  get idleCount(): number {
    let n = 0;
    for (const list of this.idle.values()) n += list.length;
    return n;
  }

  async acquire(item: StartedItem): Promise<Lease> {
    const { batchId } = item.ref;
    for (let entry = this.take(batchId); entry; entry = this.take(batchId)) {
      const sandbox = await entry.ready;
      if (sandbox?.alive) {
        // Its connections from now on are this item's in the egress log.
        this.egress.attribute(entry.key, item.ref.index);
        return { sandbox, uses: entry.uses, key: entry.key };
      }
    }
    const key = `${batchId}-${item.ref.index}`;
    const sandbox = await this.runtime.create({
      sessionId: key,
      tenantId: item.ref.tenantId,
      threadId: batchId,
      workerId: this.config.worker.id,
      limits: item.limits,
      storage: 'tmpfs',
      batch: { batchId, item: item.ref.index },
      ...(item.image ? { image: item.image } : {}),
      ...(item.network ? { network: item.network } : {}),
    });
    return { sandbox, uses: 0, key };
  }

  // After an item: kept (recycled in the background) for the batch's next item, or
  // destroyed.
  release(batchId: string, lease: Lease, reusable: boolean): void {
    const uses = lease.uses + 1;
    const { sandbox } = lease;
    const list = this.idle.get(batchId) ?? [];
    if (!this.config.batches.recycleSandboxes || !reusable || !sandbox.alive || uses >= MAX_USES || list.length >= this.config.batches.workerConcurrency) {
      void sandbox.destroy().catch(() => undefined);
      return;
    }
    const ready = sandbox.recycle().then(
      async (outcome) => {
        if (outcome.clean) return sandbox;
        this.logger.warn(`a sandbox of ${batchId} was not clean after an item (${outcome.problems.join('; ')}); destroyed`);
        await sandbox.destroy().catch(() => undefined);
        return null;
      },
      async () => {
        await sandbox.destroy().catch(() => undefined);
        return null;
      },
    );
    list.push({ ready, uses, key: lease.key });
    this.idle.set(batchId, list);
    this.expireLater(batchId);
  }

  async destroyAll(): Promise<void> {
    const all = [...this.idle.values()].flat();
    this.idle.clear();
    for (const timer of this.timers.values()) clearTimeout(timer);
    this.timers.clear();
    await Promise.allSettled(all.map(async (entry) => (await entry.ready)?.destroy()));
  }

  private take(batchId: string): Idle | undefined {
    const list = this.idle.get(batchId);
    const entry = list?.shift();
    if (list && list.length === 0) this.idle.delete(batchId);
    return entry;
  }

  private expireLater(batchId: string): void {
    clearTimeout(this.timers.get(batchId));
    this.timers.set(
      batchId,
      setTimeout(() => {
        this.timers.delete(batchId);
        const list = this.idle.get(batchId) ?? [];
        this.idle.delete(batchId);
        for (const entry of list) void entry.ready.then((sandbox) => sandbox?.destroy()).catch(() => undefined);
      }, IDLE_MS).unref(),
    );
  }
}
