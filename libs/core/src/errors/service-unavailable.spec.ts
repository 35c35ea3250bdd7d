import { execFileSync } from 'node:child_process';
import { once } from 'node:events';
import { mkdirSync, mkdtempSync, rmSync } from 'node:fs';
import { readFile } from 'node:fs/promises';
import { connect, createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Redis } from 'ioredis';
import pg from 'pg';
import { databaseOptions } from '../database/database-options.js';
import { redisOptions } from '../redis/redis.module.js';
import { outageOf, ServiceUnavailableError } from './service-unavailable.js';

describe(outageOf.name, () => {
  it.each([
    [{ name: 'QueryFailedError', message: 'x', driverError: { code: '57P01', message: 'terminating connection due to administrator command' } }, 'database'],
    [{ message: 'connect ECONNREFUSED 127.0.0.1:5432', code: 'ECONNREFUSED', port: 5432 }, 'database'],
    [new Error('Connection terminated unexpectedly'), 'database'],
    [{ message: 'the database system is starting up', code: '57P03' }, 'database'],
    [{ name: 'MaxRetriesPerRequestError', message: 'Reached the max retries per request limit (which is 1).' }, 'redis'],
    [new Error('Command timed out'), 'redis'],
    [{ message: 'connect ECONNREFUSED 127.0.0.1:6379', code: 'ECONNREFUSED', port: 6379 }, 'redis'],
    [new ServiceUnavailableError('redis'), 'redis'],
  ])('should recognise %j as an outage of the %s', (error, service) => {
    expect(outageOf(error)).toBe(service);
  });

  it.each([
    [new Error('boom')],
    [{ name: 'QueryFailedError', message: 'duplicate key', driverError: { code: '23505' } }],
    [{ name: 'QueryFailedError', message: 'syntax error', driverError: { code: '42601' } }],
    [undefined],
  ])('should not take %j for an outage', (error) => {
    expect(outageOf(error)).toBeNull();
  });

  it('should carry 503, a stable code and the retry delay', () => {
    expect(new ServiceUnavailableError('database', 3)).toMatchObject({
      status: 503,
      code: 'SERVICE_UNAVAILABLE',
      details: { service: 'database', retryAfterSeconds: 3 },
    });
  });
});

// The errors themselves, from the drivers, on both transports: what a stopped service is
// over a Unix socket (scripts/start.sh's settings) and over TCP (scripts/test.sh's).
describe(`${outageOf.name} of real driver errors`, () => {
  let dir: string;
  beforeAll(() => {
    dir = mkdtempSync(join(tmpdir(), 'drydock-outage-'));
    // Socket files with nobody listening, as a killed server leaves them: Python does
    // not remove what it bound when it exits.
    const bind = (name: string) => `s = socket.socket(socket.AF_UNIX); s.bind(${JSON.stringify(join(dir, name))})`;
    mkdirSync(join(dir, 'stale'));
    execFileSync('python3', ['-c', ['import socket', bind('stale/.s.PGSQL.5432'), bind('stale-cache.sock'), bind('docker.sock')].join('\n')]);
  });
  afterAll(() => rmSync(dir, { recursive: true, force: true }));

  const pgError = async (config: pg.ClientConfig): Promise<unknown> => {
    const client = new pg.Client({ user: 'drydock', password: 'x', database: 'x', ...config });
    return client.connect().then(
      () => client.end().then(() => new Error('connected')),
      (error: unknown) => error,
    );
  };
  // What an ioredis client emits when it cannot reach its server (commands then fail
  // with the messages the table above covers).
  const redisError = (url: string): Promise<unknown> => {
    const client = new Redis({ ...redisOptions(url, 'spec'), retryStrategy: () => null, lazyConnect: true });
    const emitted = new Promise((resolve) => client.once('error', resolve));
    void client.connect().catch(() => undefined);
    return emitted.finally(() => client.disconnect());
  };
  const freePort = async (): Promise<number> => {
    const server = createServer().listen(0, '127.0.0.1');
    await once(server, 'listening');
    const { port } = server.address() as AddressInfo;
    await new Promise((resolve) => server.close(resolve));
    return port;
  };

  it('should take a PostgreSQL socket that is gone (ENOENT) or left behind (ECONNREFUSED) for a database outage', async () => {
    const gone = await pgError({ host: join(dir, 'missing') });
    expect(gone).toMatchObject({ code: 'ENOENT' });
    expect(outageOf(gone)).toBe('database');
    const stale = await pgError({ host: join(dir, 'stale') });
    expect(stale).toMatchObject({ code: 'ECONNREFUSED' });
    expect(outageOf(stale)).toBe('database');
  });

  it('should take a refused PostgreSQL port, the one DATABASE_URL names, for a database outage', async () => {
    const port = await freePort();
    databaseOptions({ databaseUrl: `postgres://drydock:x@127.0.0.1:${port}/x` }, []);
    const refused = await pgError({ host: '127.0.0.1', port });
    expect(refused).toMatchObject({ code: 'ECONNREFUSED' });
    expect(outageOf(refused)).toBe('database');
  });

  it('should take the Redis socket REDIS_URL names, gone or left behind, for a Redis outage whatever its name', async () => {
    const gone = await redisError(`unix://${join(dir, 'cache.sock')}?db=1`);
    expect(gone).toMatchObject({ code: 'ENOENT' });
    expect(outageOf(gone)).toBe('redis');
    const stale = await redisError(`unix://${join(dir, 'stale-cache.sock')}`);
    expect(stale).toMatchObject({ code: 'ECONNREFUSED' });
    expect(outageOf(stale)).toBe('redis');
  });

  it('should take a refused Redis port, the one REDIS_URL names, for a Redis outage', async () => {
    const refused = await redisError(`redis://127.0.0.1:${await freePort()}/2`);
    expect(refused).toMatchObject({ code: 'ECONNREFUSED' });
    expect(outageOf(refused)).toBe('redis');
  });

  it('should take a failed command of a Redis client on a socket for a Redis outage', async () => {
    const client = new Redis({ ...redisOptions(`unix://${join(dir, 'cache.sock')}`, 'spec'), maxRetriesPerRequest: 1, retryStrategy: () => 10 });
    client.on('error', () => undefined);
    const failed = await client.ping().catch((error: unknown) => error);
    client.disconnect();
    expect(outageOf(failed)).toBe('redis');
  });

  it('should not take a failed connect to another socket (Docker, a sandbox channel) or a missing file for an outage', async () => {
    const connectTo = (path: string) =>
      new Promise((resolve) => {
        const socket = connect(path);
        socket.once('error', resolve);
        socket.once('connect', () => resolve(socket.destroy()));
      });
    expect(outageOf(await connectTo(join(dir, 'docker.sock')))).toBeNull();
    expect(outageOf(await connectTo(join(dir, 'missing.sock')))).toBeNull();
    expect(outageOf(await readFile(join(dir, 'missing.txt')).catch((error: unknown) => error))).toBeNull();
  });
});
