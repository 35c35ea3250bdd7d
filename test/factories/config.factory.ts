import { loadConfig, type AppConfig } from '@drydock/core';

export function makeConfig(env: Record<string, string> = {}): AppConfig {
  return loadConfig({
    DATABASE_URL: 'postgres://u:p@localhost:5432/db',
    REDIS_URL: 'redis://localhost:6379/0',
    DRYDOCK_ADMIN_KEY: 'unit-test-admin-key-0123456789',
    WORKER_ID: 'unit-worker',
    ...env,
  });
}
