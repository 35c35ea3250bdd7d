import { DrydockError } from './drydock.error.js';

export type PlatformService = 'database' | 'redis';

// A service the platform depends on is down or restarting: 503 SERVICE_UNAVAILABLE
// with Retry-After, never a 500. Raised where a request would otherwise wait on the
// outage, and mapped from driver errors by the gateway's exception filter.
export class ServiceUnavailableError extends DrydockError {
  constructor(
    readonly service: PlatformService,
    readonly retryAfterSeconds = 2,
  ) {
    super(
      'SERVICE_UNAVAILABLE',
      `The ${service === 'database' ? 'database' : 'queue (Redis)'} is unavailable right now; nothing was changed. Retry in a few seconds.`,
      503,
      { service, retryAfterSeconds },
    );
  }
}

// PostgreSQL SQLSTATEs of a server that is gone, restarting or refusing connections:
// class 08 (connection exception), 57P01-57P03 (shutdown, crash, cannot connect now),
// 53300 (too many connections).
const PG_OUTAGE = /^(08...|57P0[123]|53300)$/;
// A connection that could not be made or was lost. `connect` failures name the endpoint
// (`address`, and `port` over TCP); over a Unix socket a stopped server is ENOENT (the
// socket file is gone), ECONNREFUSED (left behind by a killed server), EACCES (being
// recreated) or EAGAIN (a full backlog). Failures on an open connection (ECONNRESET,
// EPIPE) name no endpoint.
const CONNECT_OUTAGE = new Set(['ECONNREFUSED', 'ECONNRESET', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENETUNREACH', 'ENOENT', 'EACCES', 'EAGAIN']);
const NET_OUTAGE = new Set(['ECONNREFUSED', 'ECONNRESET', 'EPIPE', 'ETIMEDOUT', 'EHOSTUNREACH', 'ENOTFOUND', 'EAI_AGAIN']);
const PG_MESSAGES = [
  'Connection terminated',
  'timeout exceeded when trying to connect',
  'Client has encountered a connection error',
  'Cannot use a pool after calling end',
];
const REDIS_MESSAGES = ['Connection is closed', 'Command timed out', "Stream isn't writeable", 'Reached the max retries per request limit'];
// node-pg (like libpq) names a server's socket <dir>/.s.PGSQL.<port>.
const PG_SOCKET = /\/\.s\.PGSQL\.\d+$/;

// Where this process reaches PostgreSQL and Redis, recorded by the functions that turn
// DATABASE_URL and REDIS_URL into client options (databaseOptions, redisOptions): a
// failed connect names its endpoint, not the client it came from.
const endpoints = new Map<string, PlatformService>([
  ['port:5432', 'database'],
  ['port:6379', 'redis'],
]);
export function recordServiceEndpoint(service: PlatformService, endpoint: { port: number } | { path: string }): void {
  endpoints.set('port' in endpoint ? `port:${endpoint.port}` : `path:${endpoint.path}`, service);
}

// Which service a failed connect was for: the endpoints recorded, PostgreSQL's socket
// name, a socket path that says redis; null for any other endpoint (Docker's socket, a
// sandbox's channel), which is no outage of ours.
function serviceAt(e: Record<string, any>): PlatformService | null {
  const address = String(e.address);
  if (typeof e.port === 'number') return endpoints.get(`port:${e.port}`) ?? null;
  if (!address.startsWith('/')) return null;
  return endpoints.get(`path:${address}`) ?? (PG_SOCKET.test(address) ? 'database' : /redis/i.test(address) ? 'redis' : null);
}

// Which service an error says is out, if any. Looks through TypeORM's wrapper
// (`driverError`) and `cause`.
export function outageOf(error: unknown): PlatformService | null {
  for (let e = error as Record<string, any> | undefined, depth = 0; e && depth < 4; depth++) {
    if (e instanceof ServiceUnavailableError) return e.service;
    const name = String(e.name ?? '');
    const message = String(e.message ?? '');
    const code = typeof e.code === 'string' ? e.code : '';
    if (name === 'MaxRetriesPerRequestError' || REDIS_MESSAGES.some((m) => message.includes(m))) return 'redis';
    if (PG_OUTAGE.test(code) || PG_MESSAGES.some((m) => message.includes(m))) return 'database';
    // A connect that failed names where it went: ours, or some other endpoint.
    if (typeof e.address === 'string' && CONNECT_OUTAGE.has(code)) return serviceAt(e);
    // A connection lost on the way (no endpoint named): the database unless the error
    // came from a Redis client.
    if (NET_OUTAGE.has(code)) return /redis/i.test(message) || e.port === 6379 ? 'redis' : 'database';
    e = (e.driverError ?? e.cause) as Record<string, any> | undefined;
  }
  return null;
}
