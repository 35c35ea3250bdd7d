import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';

// Stops and starts the PostgreSQL and Redis that scripts/lib/services.sh started, as an
// operator's restart would. Needs root.
// `crash` stops it as a crash would: at once, without flushing what the WAL buffers still
// hold (committed transactions that did not wait for their flush are lost).
export function postgres(action: 'stop' | 'start' | 'crash'): void {
  const version = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b)).pop()!;
  const args = action === 'start' ? ['start'] : ['stop', '-m', action === 'crash' ? 'immediate' : 'fast'];
  execFileSync('pg_ctlcluster', [version, 'main', ...args], { stdio: 'ignore' });
}

export function redis(action: 'stop' | 'start'): void {
  if (action === 'stop') {
    execFileSync('redis-cli', ['-p', '6379', 'shutdown'], { stdio: 'ignore' });
    return;
  }
  // Started again exactly as the test script starts it.
  execFileSync('bash', ['-c', `ROOT=${resolve('.')}; source scripts/lib/services.sh; ensure_redis`], { stdio: 'ignore' });
}
