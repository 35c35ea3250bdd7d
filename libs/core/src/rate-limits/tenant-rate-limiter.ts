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

// Takes a slot when fewer than ARGV[2] are held (expired holds dropped first), then runs
// `then`; 1 or 0.
const acquireThen = (then = '') => `
redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', ARGV[1])
if redis.call('ZCARD', KEYS[1]) >= tonumber(ARGV[2]) then return 0 end
redis.call('ZADD', KEYS[1], ARGV[3], ARGV[4])
redis.call('PEXPIRE', KEYS[1], ARGV[5])
${then}return 1`;

// COUNT on KEYS[2] (ARGV[6] its expiry, ARGV[7] the limit); -1 past the requests per
// minute, before any slot is taken.
const COUNT_FIRST = `
local n = redis.call('INCR', KEYS[2])
if n == 1 then redis.call('PEXPIRE', KEYS[2], ARGV[6]) end
if n > tonumber(ARGV[7]) then return -1 end`;

// An execution's whole admission and its hand-over in one round trip: the slot (and,
// with COUNT_FIRST, the request), then, admitted, the job pushed onto its worker's lane
// (the last key, the last argument). -1, 0 (nothing pushed) or 1.
const ACQUIRE_AND_PUSH = acquireThen(`redis.call('LPUSH', KEYS[2], ARGV[6])\n`);
const COUNT_ACQUIRE_AND_PUSH = COUNT_FIRST + acquireThen(`redis.call('LPUSH', KEYS[3], ARGV[8])\n`);

export class RateLimitedError extends DrydockError {
  constructor(message: string, retryAfterSeconds: number, details: Record<string, unknown>) {
    super('RATE_LIMITED', message, 429, { ...details, retryAfterSeconds });
  }
}

// An execution's admission, taken as its job is handed to the worker (push). `hold` names
// the slot for whoever frees it with the run's answer (the worker, in the same Redis round
// trip); null when limits are not enforced.
export interface ExecutionAdmission {
  readonly hold: { key: string; id: string } | null;
  // Takes the slot (and counts the request, with `countRequest`) and, admitted, pushes
  // `payload` onto the list `lane`, in one script; RATE_LIMITED, and nothing pushed,
  // otherwise. Null when limits are not enforced: the job is pushed as any other.
  readonly push: ((lane: string, payload: string) => Promise<void>) | null;
  // For a request that hands nothing over (refused, answered from its record): counts
  // it with `countRequest`, RATE_LIMITED past the tenant's requests per minute.
  countOnly(): Promise<void>;
  // Frees the slot if push took it (idempotent, never throws).
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
    if (!('drydockCountRequest' in redis)) redis.defineCommand('drydockCountRequest', { numberOfKeys: 1, lua: COUNT });
    if (!('drydockAcquireAndPush' in redis)) redis.defineCommand('drydockAcquireAndPush', { numberOfKeys: 2, lua: ACQUIRE_AND_PUSH });
    if (!('drydockCountAcquireAndPush' in redis)) redis.defineCommand('drydockCountAcquireAndPush', { numberOfKeys: 3, lua: COUNT_ACQUIRE_AND_PUSH });
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

  // The admission of one execution: a slot of the tenant's concurrent executions, held
  // at most `holdMs`, taken as its job is pushed (ExecutionAdmission). With `countRequest`
  // it also counts the request that asks for it, in the same round trip, as admitRequest
  // would (for a route whose guard leaves the count to it: REQUEST_COUNTED_BY_HANDLER),
  // and refuses it past the tenant's requests per minute without taking a slot.
  executionAdmission(
    tenant: RateLimitedTenant,
    holdId: string,
    holdMs: number,
    options: { countRequest?: boolean } = {},
  ): ExecutionAdmission {
    const limit = tenant.limits.concurrentExecutions ?? this.config.rateLimits.concurrentExecutions;
    const perMinute = tenant.limits.requestsPerMinute ?? this.config.rateLimits.requestsPerMinute;
    const key = `drydock:rate:executions:${tenant.id}`;
    let taken = false;
    const push = async (lane: string, payload: string) => {
      const now = Date.now();
      const slotArgs = [String(now), String(limit), String(now + holdMs), holdId, String(holdMs)];
      const outcome = Number(
        options.countRequest
          ? await this.script('drydockCountAcquireAndPush', key, requestCounterKey(tenant.id, now), lane, ...slotArgs, String(WINDOW_MS + 1_000), String(perMinute), payload)
          : await this.script('drydockAcquireAndPush', key, lane, ...slotArgs, payload),
      );
      if (outcome === -1) throw perMinuteError(perMinute, now);
      if (!outcome) {
        throw new RateLimitedError(`This tenant already has ${limit} executions running; retry when one has finished.`, 1, {
          limit,
          per: 'concurrent executions',
        });
      }
      taken = true;
    };
    // Not enforced when Redis is away as the request begins (its push then fails anyway).
    const enforced = this.connected();
    return {
      hold: enforced ? { key, id: holdId } : null,
      push: enforced ? push : null,
      countOnly: () => (options.countRequest ? this.admitRequest(tenant) : Promise.resolve()),
      release: async () => {
        if (!taken) return;
        taken = false;
        await this.redis.zrem(key, holdId).catch(() => undefined);
      },
    };
  }

  private script(name: 'drydockCountRequest' | 'drydockAcquireAndPush' | 'drydockCountAcquireAndPush', ...args: string[]): Promise<unknown> {
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
