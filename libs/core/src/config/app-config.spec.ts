import { ConfigError, loadConfig } from './app-config.js';

describe(loadConfig.name, () => {
  const base = {
    DATABASE_URL: 'postgres://u:p@localhost:5432/db',
    REDIS_URL: 'redis://localhost:6379/0',
    DRYDOCK_ADMIN_KEY: 'unit-test-admin-key-0123456789',
  };

  it('should refuse to start without an admin key, naming the variable', () => {
    const { DRYDOCK_ADMIN_KEY: _, ...env } = base;
    expect(() => loadConfig(env)).toThrow(ConfigError);
    expect(() => loadConfig(env)).toThrow(/DRYDOCK_ADMIN_KEY/);
  });

  it('should refuse a short admin key', () => {
    expect(() => loadConfig({ ...base, DRYDOCK_ADMIN_KEY: 'short' })).toThrow(/at least 24/);
  });

  it('should refuse a malformed database URL and a bad worker id', () => {
    expect(() => loadConfig({ ...base, DATABASE_URL: 'nope' })).toThrow(/DATABASE_URL/);
    expect(() => loadConfig({ ...base, WORKER_ID: 'bad id/with slash' })).toThrow(/WORKER_ID/);
  });

  it('should coerce numbers from the environment', () => {
    const sut = loadConfig({ ...base, SANDBOX_MEMORY_MB: '1024', GATEWAY_PORT: '9000' });
    expect(sut.defaultLimits.memoryMb).toBe(1024);
    expect(sut.gateway.port).toBe(9000);
  });

  it('should keep 500 threads of checkpoints in memory by default, accept 0 (off) and refuse a negative count', () => {
    expect(loadConfig(base).agent.checkpointCacheThreads).toBe(500);
    expect(loadConfig({ ...base, AGENT_CHECKPOINT_CACHE_THREADS: '0' }).agent.checkpointCacheThreads).toBe(0);
    expect(() => loadConfig({ ...base, AGENT_CHECKPOINT_CACHE_THREADS: '-1' })).toThrow(/AGENT_CHECKPOINT_CACHE_THREADS/);
    expect(loadConfig(base).agent.checkpointCacheIdleMs).toBe(900_000);
    expect(loadConfig({ ...base, AGENT_CHECKPOINT_CACHE_IDLE_MS: '0' }).agent.checkpointCacheIdleMs).toBe(0);
    expect(() => loadConfig({ ...base, AGENT_CHECKPOINT_CACHE_IDLE_MS: 'soon' })).toThrow(/AGENT_CHECKPOINT_CACHE_IDLE_MS/);
  });
});

describe('sandbox hardening settings', () => {
  const base = {
    DATABASE_URL: 'postgres://u:p@localhost:5432/db',
    REDIS_URL: 'redis://localhost:6379/0',
    DRYDOCK_ADMIN_KEY: 'unit-test-admin-key-0123456789',
  };

  it('should take a runtime name and a profile path, and leave both unset by default', () => {
    expect(loadConfig(base).docker).toMatchObject({ runtime: undefined, seccompProfile: undefined });
    expect(loadConfig({ ...base, SANDBOX_RUNTIME: 'crun', SANDBOX_SECCOMP_PROFILE: '/etc/drydock/seccomp.json' }).docker).toMatchObject({
      runtime: 'crun',
      seccompProfile: '/etc/drydock/seccomp.json',
    });
  });

  it('should offer the gvisor tier with SANDBOX_GVISOR_RUNTIME, and read SANDBOX_RUNTIME=runsc as every session on it', () => {
    expect(loadConfig(base).docker).toMatchObject({ gvisorRuntime: undefined, defaultTier: 'runc' });
    expect(loadConfig({ ...base, SANDBOX_GVISOR_RUNTIME: 'runsc' }).docker).toMatchObject({ gvisorRuntime: 'runsc', defaultTier: 'runc' });
    expect(loadConfig({ ...base, SANDBOX_RUNTIME: 'runsc' }).docker).toMatchObject({ gvisorRuntime: 'runsc', defaultTier: 'gvisor' });
    expect(loadConfig({ ...base, SANDBOX_RUNTIME: 'runsc' }).docker.runtime).toBeUndefined();
    expect(() => loadConfig({ ...base, SANDBOX_DEFAULT_TIER: 'gvisor' })).toThrow(/SANDBOX_DEFAULT_TIER: "gvisor" needs SANDBOX_GVISOR_RUNTIME/);
    expect(() => loadConfig({ ...base, SANDBOX_DEFAULT_TIER: 'kata' })).toThrow(/SANDBOX_DEFAULT_TIER/);
  });

  it('should hibernate idle sessions by default, and take SESSION_IDLE_ACTION=end', () => {
    expect(loadConfig(base).worker).toMatchObject({ sessionIdleAction: 'hibernate', sessionHibernateAfterMs: 300_000, hibernatedRetentionMs: 604_800_000 });
    expect(loadConfig({ ...base, SESSION_IDLE_ACTION: 'end' }).worker.sessionIdleAction).toBe('end');
    expect(() => loadConfig({ ...base, SESSION_IDLE_ACTION: 'sleep' })).toThrow(/SESSION_IDLE_ACTION/);
  });

  it('should refuse an unconfined profile and a malformed runtime name, naming the variable', () => {
    expect(() => loadConfig({ ...base, SANDBOX_SECCOMP_PROFILE: 'unconfined' })).toThrow(/SANDBOX_SECCOMP_PROFILE/);
    expect(() => loadConfig({ ...base, SANDBOX_RUNTIME: 'run sc; rm' })).toThrow(/SANDBOX_RUNTIME/);
  });

  it('should read the zygote preload list as module names, none by default, and refuse anything else', () => {
    expect(loadConfig(base).docker.preloadModules).toEqual([]);
    expect(loadConfig({ ...base, SANDBOX_PRELOAD_MODULES: ' numpy, pandas ,matplotlib.pyplot' }).docker.preloadModules).toEqual([
      'numpy',
      'pandas',
      'matplotlib.pyplot',
    ]);
    expect(() => loadConfig({ ...base, SANDBOX_PRELOAD_MODULES: 'os;import sys' })).toThrow(/SANDBOX_PRELOAD_MODULES/);
  });
});

describe('CORS settings', () => {
  const base = {
    DATABASE_URL: 'postgres://u:p@localhost:5432/db',
    REDIS_URL: 'redis://localhost:6379/0',
    DRYDOCK_ADMIN_KEY: 'unit-test-admin-key-0123456789',
  };

  it('should allow no origin by default and read a comma-separated list as browsers send origins', () => {
    expect(loadConfig(base).cors.origins).toEqual([]);
    expect(loadConfig({ ...base, CORS_ORIGINS: ' https://App.Example.com , http://localhost:5173/,https://x.test:443' }).cors.origins).toEqual([
      'https://app.example.com',
      'http://localhost:5173',
      'https://x.test',
    ]);
  });

  it('should refuse an entry that is not an origin, naming the variable', () => {
    for (const entry of ['app.example.com', 'https://app.example.com/path', 'ftp://files.test', '*']) {
      expect(() => loadConfig({ ...base, CORS_ORIGINS: entry })).toThrow(/CORS_ORIGINS/);
    }
  });
});
