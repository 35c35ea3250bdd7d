import type { Redis } from 'ioredis';
import { runClaimKey, type RunGuard } from './run-guard.js';

// One SET NX on the hot path (~0.05 ms) instead of a database round trip before the
// code may start; the claim outlives any plausible redelivery.
const CLAIM_TTL_MS = 7 * 24 * 3600 * 1000;

export class RedisRunGuard implements RunGuard {
  constructor(private readonly redis: Redis) {}

  async claim(executionId: string): Promise<boolean> {
    return (await this.redis.set(runClaimKey(executionId), '1', 'PX', CLAIM_TTL_MS, 'NX')) === 'OK';
  }
}
