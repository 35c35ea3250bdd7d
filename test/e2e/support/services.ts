import { execFileSync } from 'node:child_process';
import { existsSync, readdirSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { applyTestEnv } from './test-env.js';

// Stops and starts the PostgreSQL and Redis that scripts/lib/services.sh started, as an
// operator's restart would. Needs root.
// `crash` stops it as a crash would: at once, without flushing what the WAL buffers still
// hold (committed transactions that did not wait for their flush are lost).
export function postgres(action: 'stop' | 'start' | 'crash'): void {
  const version = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b)).pop()!;
  const args = action === 'start' ? ['start'] : ['stop', '-m', action === 'crash' ? 'immediate' : 'fast'];
  execFileSync('pg_ctlcluster', [version, 'main', ...args], { stdio: 'ignore' });
}

// Ours: the Redis that answers on scripts/lib/services.sh's socket (also on 6379 when it
// started there), which `start` starts again; a Redis of someone else's on 6379 is not
// stopped when ours answers on the socket.
export function redis(action: 'stop' | 'start'): void {
  if (action === 'stop') {
    const socket = join(process.env.DRYDOCK_VAR ?? resolve('var'), 'redis', 'redis.sock');
    execFileSync('redis-cli', [...(existsSync(socket) ? ['-s', socket] : ['-p', '6379']), 'shutdown'], { stdio: 'ignore' });
    return;
  }
  // Started again exactly as the test script starts it.
  execFileSync('bash', ['-c', `ROOT=${resolve('.')}; source scripts/lib/services.sh; ensure_redis`], { stdio: 'ignore' });
}

// DATABASE_URL and REDIS_URL as scripts/start.sh writes them to var/drydock.env (pg_url,
// redis_url: PostgreSQL and Redis over their Unix sockets), for the database and Redis
// database this test run uses over TCP. Throws when a socket does not answer.
export function unixSocketSettings(): { DATABASE_URL: string; REDIS_URL: string } {
  applyTestEnv();
  const database = new URL(process.env.DATABASE_URL!).pathname.slice(1);
  const db = new URL(process.env.REDIS_URL!).pathname.slice(1) || '0';
  const [DATABASE_URL = '', REDIS_URL = ''] = execFileSync(
    'bash',
    ['-c', `ROOT=${resolve('.')}; source scripts/lib/services.sh; pg_url "$1"; redis_url "$2"`, 'settings', database, db],
    { encoding: 'utf8' },
  )
    .trim()
    .split('\n');
  if (!/\?host=\//.test(DATABASE_URL) || !REDIS_URL.startsWith('unix://')) {
    throw new Error(`PostgreSQL's or Redis's Unix socket does not answer (pg_url: ${DATABASE_URL}, redis_url: ${REDIS_URL}); scripts/test.sh sets them up`);
  }
  return { DATABASE_URL, REDIS_URL };
}
