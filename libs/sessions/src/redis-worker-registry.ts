import { Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { WORKER_REGISTRY_SET, workerDrainKey, workerHeartbeatKey } from '@drydock/execution';
import type { WorkerInfo, WorkerRegistry } from './worker-registry.js';

@Injectable()
export class RedisWorkerRegistry implements WorkerRegistry {
  private snapshot: { takenAt: number; ids: Set<string> } | null = null;

  // `isLive` answers from a snapshot of the live set up to `snapshotMs` old: liveness is
  // only as fresh as the heartbeat expiry anyway, and the hot path saves a round trip.
  constructor(
    private readonly redis: Redis,
    private readonly snapshotMs = 0,
  ) {}

  async heartbeat(info: WorkerInfo, ttlMs: number): Promise<void> {
    await this.redis
      .multi()
      .set(workerHeartbeatKey(info.id), JSON.stringify(info), 'PX', ttlMs)
      .sadd(WORKER_REGISTRY_SET, info.id)
      .exec();
  }

  async listLive(): Promise<WorkerInfo[]> {
    const ids = await this.redis.smembers(WORKER_REGISTRY_SET);
    if (ids.length === 0) return [];
    const values = await this.redis.mget(ids.map(workerHeartbeatKey));
    const live: WorkerInfo[] = [];
    const dead: string[] = [];
    values.forEach((value, i) => (value ? live.push(JSON.parse(value) as WorkerInfo) : dead.push(ids[i]!)));
    if (dead.length) await this.redis.srem(WORKER_REGISTRY_SET, ...dead);
    return live;
  }

  async isLive(workerId: string): Promise<boolean> {
    if (this.snapshotMs <= 0) return (await this.redis.exists(workerHeartbeatKey(workerId))) === 1;
    const now = Date.now();
    if (!this.snapshot || now - this.snapshot.takenAt >= this.snapshotMs) {
      const ids = new Set((await this.listLive()).map((w) => w.id));
      this.snapshot = { takenAt: now, ids };
    }
    return this.snapshot.ids.has(workerId);
  }

  async requestDrain(workerId: string): Promise<void> {
    // Outlives a missed beat or two; a worker that restarts clears it.
    await this.redis.set(workerDrainKey(workerId), '1', 'EX', 24 * 3600);
  }

  async drainRequested(workerId: string): Promise<boolean> {
    return (await this.redis.exists(workerDrainKey(workerId))) === 1;
  }

  async clearDrainRequest(workerId: string): Promise<void> {
    await this.redis.del(workerDrainKey(workerId));
  }

  async deregister(workerId: string): Promise<void> {
    this.snapshot = null;
    await this.redis.multi().del(workerHeartbeatKey(workerId)).srem(WORKER_REGISTRY_SET, workerId).exec();
  }
}
