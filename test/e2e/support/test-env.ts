// Defaults for running jest directly; scripts/test.sh sets the same variables.
export function applyTestEnv(): void {
  process.env.NODE_ENV ??= 'test';
  process.env.DATABASE_URL ??= 'postgres://drydock:drydock@127.0.0.1:5432/drydock_test';
  process.env.REDIS_URL ??= 'redis://127.0.0.1:6379/15';
  process.env.DRYDOCK_ADMIN_KEY ??= 'test-admin-key-0123456789abcdef';
  process.env.SANDBOX_IMAGE ??= 'drydock/sandbox:latest';
  process.env.ARTIFACTS_SIGNING_SECRET ??= 'test-signing-secret-0123456789abcdef0123';
  process.env.ARTIFACTS_DIR ??= 'var/test-artifacts';
  // In-process apps log nothing (their request lines would fill the test output); apps
  // started as processes (support/*-process.ts) log at info.
  process.env.LOG_LEVEL ??= 'silent';
}
