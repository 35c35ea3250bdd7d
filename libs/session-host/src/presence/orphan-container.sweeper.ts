import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { SANDBOX_RUNTIME, type SandboxRuntime } from '@drydock/execution';
import { WORKER_REGISTRY, type WorkerRegistry } from '@drydock/sessions';

// Containers a worker left on this Docker engine when it died and did not come back
// (a worker restarted under its id clears its own at start). Every worker sweeps its
// engine every WORKER_ORPHAN_SWEEP_MS and removes the sandboxes and session volumes of
// workers that are not in the registry (their heartbeat lapsed: the TTL has passed) and
// whose newest container is older than the heartbeat TTL, so a worker that is starting
// (containers created, first heartbeat not yet seen) is never swept. Live workers,
// draining or drained ones included, are never touched; containers without our worker
// label are not ours.
@Injectable()
export class OrphanContainerSweeper {
  private readonly logger = new Logger(OrphanContainerSweeper.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SANDBOX_RUNTIME) private readonly runtime: SandboxRuntime,
    @Inject(WORKER_REGISTRY) private readonly workers: WorkerRegistry,
  ) {}

  // The workers whose leftovers were removed.
  async sweep(now = Date.now()): Promise<string[]> {
    const present = await this.runtime.sandboxWorkers();
    if (present.length === 0) return [];
    const live = new Set((await this.workers.listLive()).map((w) => w.id));
    live.add(this.config.worker.id);
    const ttl = this.config.worker.heartbeatTtlMs;
    const gone: string[] = [];
    for (const { workerId, newestCreatedAt } of present) {
      if (live.has(workerId) || now - newestCreatedAt < ttl) continue;
      const removed = await this.runtime.removeOrphans(workerId, new Set());
      this.logger.log(`removed ${removed} containers of worker ${workerId}, which is gone`);
      gone.push(workerId);
    }
    return gone;
  }
}
