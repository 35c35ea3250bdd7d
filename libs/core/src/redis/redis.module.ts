import { Global, Inject, Logger, Module, type OnApplicationShutdown } from '@nestjs/common';
import { Redis, type RedisOptions } from 'ioredis';
import { APP_CONFIG, type AppConfig } from '../config/app-config.js';
import { recordServiceEndpoint } from '../errors/service-unavailable.js';

export const REDIS = Symbol('REDIS');

export function createRedis(url: string, name: string, options: Partial<RedisOptions> = {}): Redis {
  const redis = new Redis({ ...redisOptions(url, name), ...options });
  // Without a listener ioredis prints every failed reconnect attempt (ten a second) as an
  // "Unhandled error event" with its stack. One line when the connection is lost, one
  // when it is back; commands meanwhile fail or wait as their options say.
  const logger = new Logger('Redis');
  let down = false;
  redis.on('error', (error: Error) => {
    if (down) return;
    down = true;
    logger.warn(`connection ${name} lost: ${error.message}; reconnecting`);
  });
  redis.on('ready', () => {
    if (!down) return;
    down = false;
    logger.log(`connection ${name} is back`);
  });
  return redis;
}

// For clients that serve requests (not BullMQ's, whose blocking reads must wait): a
// command Redis does not answer within this time fails, so a request during an outage
// is answered 503 instead of waiting for Redis to come back.
export const REQUEST_COMMAND_TIMEOUT_MS = 3_000;

// Connection options rather than a client: BullMQ closes connections it created itself
// but leaves a client it was handed open, which would keep a stopping process alive.
//
// `redis://[user:password@]host[:port][/db]`, `rediss://…` (TLS), or a Unix socket on this
// host, `unix:///path/to/redis.sock[?db=N][&password=…]`.
export function redisOptions(url: string, name: string): RedisOptions {
  const parsed = new URL(url);
  const endpoint = parsed.protocol === 'unix:' ? socketOf(parsed) : hostOf(parsed);
  // So that a failed connect to it is known for an outage of Redis (outageOf).
  recordServiceEndpoint('redis', endpoint.path ? { path: endpoint.path } : { port: endpoint.port! });
  return {
    ...endpoint,
    // What BullMQ requires of the connections it uses.
    maxRetriesPerRequest: null,
    // Reconnect within a second of Redis coming back. BullMQ's own default waits up to
    // 20 s between attempts, which after a restart left an idle worker deaf for that long.
    retryStrategy: (attempt: number) => Math.min(attempt * 100, 1_000),
    connectionName: name,
  };
}

@Global()
@Module({
  providers: [
    {
      provide: REDIS,
      inject: [APP_CONFIG],
      useFactory: (config: AppConfig) => createRedis(config.redisUrl, 'drydock', { commandTimeout: REQUEST_COMMAND_TIMEOUT_MS }),
    },
  ],
  exports: [REDIS],
})
export class RedisModule implements OnApplicationShutdown {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  async onApplicationShutdown(): Promise<void> {
    await this.redis.quit().catch(() => this.redis.disconnect());
  }
}

function socketOf(url: URL): RedisOptions {
  const password = url.searchParams.get('password');
  return { path: decodeURIComponent(url.pathname), db: Number(url.searchParams.get('db') ?? 0), password: password ?? undefined };
}

function hostOf(url: URL): RedisOptions {
  return {
    host: url.hostname,
    port: url.port ? Number(url.port) : 6379,
    db: url.pathname.length > 1 ? Number(url.pathname.slice(1)) : 0,
    username: url.username ? decodeURIComponent(url.username) : undefined,
    password: url.password ? decodeURIComponent(url.password) : undefined,
    tls: url.protocol === 'rediss:' ? {} : undefined,
  };
}
