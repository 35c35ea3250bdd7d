import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { DrydockError } from '../errors/drydock.error.js';
import { REDIS } from '../redis/redis.module.js';
import type { TenantLimits } from '../tenancy/tenant-limits.js';

const WINDOW_MS = 60_000;

// Counts one request in the window's counter, which expires with its window; the count.
const COUNT = `
local n = redis.call('INCR', KEYS[1])
if n == 1 then redis.call('PEXPIRE', KEYS[1], ARGV[1]) end
return n`;

// Takes a slot when fewer than ARGV[2] are held (expired holds dropped first); 1 or 0.
const ACQUIRE = `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
return 1`;

// COUNT on KEYS[2] (ARGV[6] its expiry, ARGV[7] the limit), then ACQUIRE on KEYS[1]
// unless the count is over: -1 (over the requests per minute), else 1 or 0. An
// execution request in one round trip instead of two.
const COUNT_AND_ACQUIRE =
  `
local n = redis.call('INCR', KEYS[2])
if n == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[6]) end
if n > tonumber(ARGV[7]) then return -1 end` + ACQUIRE;

export class RateLimitedError extends DrydockError {
  constructor(message: string, retryAfterSeconds: number, details: Record<string, unknown>) {
    super('RATE_LIMITED', message, 429, { ...details, retryAfterSeconds });
  }
}

// A held execution slot. `hold` names it for whoever frees it with the run's answer (the
// worker, in the same Redis round trip); null when limits are not enforced. release()
// frees it from here (idempotent, never throws).
export interface ExecutionSlot {
  hold: { key: string; id: string } | null;
  release(): Promise<void>;
}

export interface RateLimitedTenant {
  id: string;
  limits: Pick<TenantLimits, 'requestsPerMinute' | 'concurrentExecutions'>;
}

// Per-tenant limits shared by every gateway through Redis (tenant limits
// `requestsPerMinute` and `concurrentExecutions`, defaults RATE_LIMIT_*):
// - requests: a counter per tenant and clock minute (one script: INCR, PEXPIRE on the
//   first);
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
    // The scripts as commands of the client: sent as EVALSHA (ioredis loads a script on
    // the first NOSCRIPT), not the whole script text every time.
    if (!('drydockAcquireSlot' in redis)) redis.defineCommand('drydockAcquireSlot', { numberOfKeys: 1, lua: ACQUIRE });
    if (!('drydockCountRequest' in redis)) redis.defineCommand('drydockCountRequest', { numberOfKeys: 1, lua: COUNT });
    if (!('drydockCountAndAcquire' in redis)) redis.defineCommand('drydockCountAndAcquire', { numberOfKeys: 2, lua: COUNT_AND_ACQUIRE });
  }

  // Counts one request of the tenant; throws RATE_LIMITED past its limit this minute.
  async admitRequest(tenant: RateLimitedTenant): Promise<void> {
    const limit = tenant.limits.requestsPerMinute ?? this.config.rateLimits.requestsPerMinute;
    if (!this.connected()) return;
    const now = Date.now();
    let count: number;
    try {
      count = Number(await this.script('drydockCountRequest', requestCounterKey(tenant.id, now), String(WINDOW_MS + 1_000)));
    } catch (error) {
      this.warn(error as Error);
      return;
    }
    if (count > limit) throw perMinuteError(limit, now);
  }

  // Holds one of the tenant's execution slots for at most `holdMs`; throws
  // RATE_LIMITED when all are taken. With `countRequest` it also counts the request that
  // asks for it, in the same round trip, as admitRequest would (for a route whose guard
  // leaves the count to it: REQUEST_COUNTED_BY_HANDLER), and refuses it past the
  // tenant's requests per minute without taking a slot.
  async acquireExecution(
    tenant: RateLimitedTenant,
    holdId: string,
    holdMs: number,
    options: { countRequest?: boolean } = {},
  ): Promise<ExecutionSlot> {
    const limit = tenant.limits.concurrentExecutions ?? this.config.rateLimits.concurrentExecutions;
    const unenforced: ExecutionSlot = { hold: null, release: async () => undefined };
    if (!this.connected()) return unenforced;
    const key = `drydock:rate:executions:${tenant.id}`;
    const now = Date.now();
    const slotArgs = [String(now), String(limit), String(now + holdMs), holdId, String(holdMs)];
    const perMinute = tenant.limits.requestsPerMinute ?? this.config.rateLimits.requestsPerMinute;
    let taken: number;
    try {
      taken = Number(
        options.countRequest
          ? await this.script('drydockCountAndAcquire', key, requestCounterKey(tenant.id, now), ...slotArgs, String(WINDOW_MS + 1_000), String(perMinute))
          : await this.script('drydockAcquireSlot', key, ...slotArgs),
      );
    } catch (error) {
      this.warn(error as Error);
      return unenforced;
    }
    if (taken === -1) throw perMinuteError(perMinute, now);
    if (!taken) {
      throw new RateLimitedError(`This tenant already has ${limit} executions running; retry when one has finished.`, 1, {
        limit,
        per: 'concurrent executions',
      });
    }
    let released = false;
    return {
      hold: { key, id: holdId },
      release: async () => {
        if (released) return;
        released = true;
        await this.redis.zrem(key, holdId).catch(() => undefined);
      },
    };
  }

  private script(name: 'drydockAcquireSlot' | 'drydockCountRequest' | 'drydockCountAndAcquire', ...args: string[]): Promise<unknown> {
    return (this.redis as unknown as Record<string, (...a: string[]) => Promise<unknown>>)[name]!(...args);
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

// The tenant's request counter for the clock minute of `now`.
function requestCounterKey(tenantId: string, now: number): string {
  return `drydock:rate:requests:${tenantId}:${Math.floor(now / WINDOW_MS)}`;
}

function perMinuteError(limit: number, now: number): RateLimitedError {
  const retryAfterSeconds = Math.max(1, Math.ceil(((Math.floor(now / WINDOW_MS) + 1) * WINDOW_MS - now) / 1000));
  return new RateLimitedError(`This tenant made more than ${limit} requests this minute; retry after ${retryAfterSeconds} s.`, retryAfterSeconds, {
    limit,
    per: 'minute',
  });
}
