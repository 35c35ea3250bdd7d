import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DrydockError } from '../errors/drydock.error.js';
import { REDIS } from '../redis/redis.module.js';
import type { TenantLimits } from '../tenancy/tenant-limits.js';

const WINDOW_MS = 60_000;

// Takes a slot when fewer than ARGV[2] are held (expired holds dropped first); 1 or 0.
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;

export class RateLimitedError extends DrydockError {
  constructor(message: string, retryAfterSeconds: number, details: Record<string, unknown>) {
    super('RATE_LIMITED', message, 429, { ...details, retryAfterSeconds });
  }
}

export interface RateLimitedTenant {
  id: string;
  limits: Pick<TenantLimits, 'requestsPerMinute' | 'concurrentExecutions'>;
}

// Per-tenant limits shared by every gateway through Redis (tenant limits
// `requestsPerMinute` and `concurrentExecutions`, defaults RATE_LIMIT_*):
// - requests: a counter per tenant and clock minute (INCR + PEXPIRE, one round trip);
// - executions running at once: a sorted set of holds per tenant, each expiring after
//   the longest its request can wait, so a gateway that dies does not keep its slots.
// Over a limit: 429 RATE_LIMITED with Retry-After. While Redis is not connected the
// limits are not enforced (fail open): requests that need only PostgreSQL keep working
// during a Redis outage, and those that need Redis answer 503 on their own.
@Injectable()
export class TenantRateLimiter {
  private readonly logger = new Logger(TenantRateLimiter.name);
  private warnedAt = 0;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(REDIS) private readonly redis: Redis,
  ) {
    // ACQUIRE as a command of the client: sent as EVALSHA (ioredis loads the script on
    // the first NOSCRIPT), not the whole script text on every execution.
    if (!('drydockAcquireSlot' in redis)) redis.defineCommand('drydockAcquireSlot', { numberOfKeys: 1, lua: ACQUIRE });
  }

  // Counts one request of the tenant; throws RATE_LIMITED past its limit this minute.
  async admitRequest(tenant: RateLimitedTenant): Promise<void> {
    const limit = tenant.limits.requestsPerMinute ?? this.config.rateLimits.requestsPerMinute;
    if (!this.connected()) return;
    const now = Date.now();
    const window = Math.floor(now / WINDOW_MS);
    const key = `drydock:rate:requests:${tenant.id}:${window}`;
    let count: number;
    try {
      const replies = await this.redis.multi().incr(key).pexpire(key, WINDOW_MS + 1_000).exec();
      count = Number(replies?.[0]?.[1] ?? 0);
    } catch (error) {
      this.warn(error as Error);
      return;
    }
    if (count > limit) {
      const retryAfterSeconds = Math.max(1, Math.ceil(((window + 1) * WINDOW_MS - now) / 1000));
      throw new RateLimitedError(
        `This tenant made more than ${limit} requests this minute; retry after ${retryAfterSeconds} s.`,
        retryAfterSeconds,
        { limit, per: 'minute' },
      );
    }
  }

  // Holds one of the tenant's execution slots for at most `holdMs`; throws
  // RATE_LIMITED when all are taken. Returns the release (idempotent, never throws).
  async acquireExecution(tenant: RateLimitedTenant, holdId: string, holdMs: number): Promise<() => Promise<void>> {
    const limit = tenant.limits.concurrentExecutions ?? this.config.rateLimits.concurrentExecutions;
    const noop = async () => undefined;
    if (!this.connected()) return noop;
    const key = `drydock:rate:executions:${tenant.id}`;
    const now = Date.now();
    let taken: number;
    try {
      taken = Number(await this.acquireScript(key, String(now), String(limit), String(now + holdMs), holdId, String(holdMs)));
    } catch (error) {
      this.warn(error as Error);
      return noop;
    }
    if (!taken) {
      throw new RateLimitedError(`This tenant already has ${limit} executions running; retry when one has finished.`, 1, {
        limit,
        per: 'concurrent executions',
      });
    }
    let released = false;
    return async () => {
      if (released) return;
      released = true;
      await this.redis.zrem(key, holdId).catch(() => undefined);
    };
  }

  private acquireScript(...args: string[]): Promise<unknown> {
    return (this.redis as Redis & { drydockAcquireSlot(...a: string[]): Promise<unknown> }).drydockAcquireSlot(...args);
  }

  private connected(): boolean {
    return this.redis.status === 'ready';
  }

  private warn(error: Error): void {
    if (Date.now() - this.warnedAt < 60_000) return;
    this.warnedAt = Date.now();
    this.logger.warn(`rate limits not enforced: ${error.message}`);
  }
}
