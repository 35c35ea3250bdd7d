import { spawn, type ChildProcess } from 'node:child_process';
import { mkdtempSync, rmSync, existsSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { createRedis, redisOptions } from './redis.module.js';

describe('redisOptions', () => {
  it('reads host, port, database and credentials from a redis:// URL, and TLS from rediss://', () => {
    expect(redisOptions('redis://app:s%40cret@cache.internal:6380/4', 'n')).toMatchObject({
      host: 'cache.internal',
      port: 6380,
      db: 4,
      username: 'app',
      password: 's@cret',
      tls: undefined,
      connectionName: 'n',
    });
    expect(redisOptions('rediss://cache.internal', 'n')).toMatchObject({ port: 6379, db: 0, tls: {} });
  });

  it('reads a Unix socket, its database and password from a unix:// URL', () => {
    const options = redisOptions('unix:///var/lib/drydock/redis.sock?db=3&password=pw', 'n');
    expect(options).toMatchObject({ path: '/var/lib/drydock/redis.sock', db: 3, password: 'pw' });
    expect(options).not.toHaveProperty('host');
  });
});

describe('createRedis over a Unix socket', () => {
  let dir: string;
  let server: ChildProcess;
  const socket = () => join(dir, 'redis.sock');

  beforeAll(async () => {
    dir = mkdtempSync(join(tmpdir(), 'drydock-redis-'));
    server = spawn('redis-server', ['--port', '0', '--unixsocket', socket(), '--save', '', '--appendonly', 'no', '--dir', dir], { stdio: 'ignore' });
    for (let i = 0; i < 100 && !existsSync(socket()); i++) await new Promise((resolve) => setTimeout(resolve, 50));
  });
  afterAll(() => {
    server.kill();
    rmSync(dir, { recursive: true, force: true });
  });

  it('talks to the Redis listening there, in the database the URL names', async () => {
    const client = createRedis(`unix://${socket()}?db=2`, 'spec');
    try {
      await client.set('k', 'v');
      expect(await client.get('k')).toBe('v');
      expect(await client.client('INFO')).toMatch(/db=2/);
    } finally {
      client.disconnect();
    }
  });
});
