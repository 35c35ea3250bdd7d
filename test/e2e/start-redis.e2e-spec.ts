import { execFileSync, spawn, type ChildProcess } from 'node:child_process';
import { existsSync, mkdtempSync, rmSync } from 'node:fs';
import { createServer, type AddressInfo } from 'node:net';
import { tmpdir } from 'node:os';
import { join, resolve } from 'node:path';
import { createRedis } from '@drydock/core';

// scripts/start.sh next to a Redis it did not start (a developer's own, another
// checkout's) on the port it would take: it runs its own Redis on its own socket, leaves
// the other one alone, says what is in the way, and the URL it gives the apps reaches
// its own Redis. The other Redis and "the default port" are a free port of this test
// (REDIS_PORT), and the script's var folder a temporary one: the machine's Redis on 6379
// is not touched.
describe('ensure_redis next to a Redis it did not start', () => {
  let foreign: ChildProcess;
  let foreignDir: string;
  let varDir: string;
  let port: number;
  const socket = () => join(varDir, 'redis', 'redis.sock');
  const script = (body: string) =>
    execFileSync('bash', ['-c', `set -euo pipefail; ROOT=${resolve('.')}; source scripts/lib/services.sh; ${body}`], {
      env: { ...process.env, DRYDOCK_VAR: varDir, REDIS_PORT: String(port) },
      encoding: 'utf8',
    });
  const cli = (...args: string[]) => execFileSync('redis-cli', args, { encoding: 'utf8' }).trim();

  beforeAll(async () => {
    const probe = createServer().listen(0, '127.0.0.1');
    await new Promise((r) => probe.once('listening', r));
    port = (probe.address() as AddressInfo).port;
    await new Promise((r) => probe.close(r));
    foreignDir = mkdtempSync(join(tmpdir(), 'drydock-foreign-redis-'));
    varDir = mkdtempSync(join(tmpdir(), 'drydock-var-'));
    foreign = spawn('redis-server', ['--port', String(port), '--bind', '127.0.0.1', '--dir', foreignDir, '--save', '', '--appendonly', 'no'], { stdio: 'ignore' });
    for (let i = 0; i < 100; i++) {
      try {
        if (cli('-p', String(port), 'ping') === 'PONG') break;
      } catch {
        /* not up yet */
      }
      await new Promise((r) => setTimeout(r, 50));
    }
  });

  afterAll(() => {
    if (existsSync(socket())) {
      try {
        cli('-s', socket(), 'shutdown', 'nosave');
      } catch {
        /* gone already */
      }
    }
    // SIGKILL: a Redis whose folder goes next may refuse a graceful shutdown.
    foreign?.kill('SIGKILL');
    rmSync(foreignDir, { recursive: true, force: true });
    rmSync(varDir, { recursive: true, force: true });
  });

  it('should start its own Redis on its own socket, say what holds the port, and give the apps a URL that reaches it', async () => {
    const out = script('ensure_redis; echo "url=$(redis_url 3)"');
    expect(out).toContain(`port ${port} is taken by a Redis`);
    expect(out).toContain(`data in ${foreignDir}`);
    const url = /^url=(.*)$/m.exec(out)?.[1];
    expect(url).toBe(`unix://${socket()}?db=3`);

    // The apps' REDIS_URL reaches our Redis, with BullMQ's settings, in its own folder.
    const client = createRedis(url!, 'start-redis-spec');
    try {
      expect(await client.ping()).toBe('PONG');
      expect(await client.config('GET', 'dir')).toEqual(['dir', join(varDir, 'redis')]);
      expect(await client.config('GET', 'maxmemory-policy')).toEqual(['maxmemory-policy', 'noeviction']);
      expect(await client.config('GET', 'appendonly')).toEqual(['appendonly', 'yes']);
    } finally {
      client.disconnect();
    }
    // The other Redis is still there, as it was.
    expect(cli('-p', String(port), 'config', 'get', 'appendonly')).toBe('appendonly\nno');
    expect(cli('-p', String(port), 'config', 'get', 'dir')).toBe(`dir\n${foreignDir}`);

    // Run again, it finds its own Redis on the socket and starts no other.
    const runId = cli('-s', socket(), 'info', 'server').match(/run_id:(\w+)/)![1];
    expect(script('ensure_redis; echo "url=$(redis_url 0)"')).not.toContain('starting redis');
    expect(cli('-s', socket(), 'info', 'server').match(/run_id:(\w+)/)![1]).toBe(runId);
  });
});
