import type { Redis } from 'ioredis';
import { runClaimKey, type RunGuard } from './run-guard.js';

// One SET NX on the hot path (~0.05 ms) instead of a database round trip before the
// code may start; runWindow says how long it lasts.
export class RedisRunGuard implements RunGuard {
  constructor(private readonly redis: Redis) {}

  async claim(executionId: string, holdMs: number): Promise<boolean> {
    return (await this.redis.set(runClaimKey(executionId), '1', 'PX', Math.max(1, Math.ceil(holdMs)), 'NX')) === 'OK';
  }
}
