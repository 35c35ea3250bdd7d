import { execFileSync } from 'node:child_process';
import { readdirSync } from 'node:fs';
import { resolve } from 'node:path';

// Stops and starts the PostgreSQL and Redis that scripts/lib/services.sh started, as an
// operator's restart would. Needs root.
export function postgres(action: 'stop' | 'start'): void {
  const version = readdirSync('/usr/lib/postgresql').sort((a, b) => Number(a) - Number(b)).pop()!;
  execFileSync('pg_ctlcluster', [version, 'main', action, ...(action === 'stop' ? ['-m', 'fast'] : [])], { stdio: 'ignore' });
}

export function redis(action: 'stop' | 'start'): void {
  if (action === 'stop') {
    execFileSync('redis-cli', ['-p', '6379', 'shutdown'], { stdio: 'ignore' });
    return;
  }
  // Started again exactly as the test script starts it.
  execFileSync('bash', ['-c', `ROOT=${resolve('.')}; source scripts/lib/services.sh; ensure_redis`], { stdio: 'ignore' });
}
