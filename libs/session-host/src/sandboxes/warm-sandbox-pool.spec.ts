import { jest } from '@jest/globals';
import type { SandboxSpec } from '@drydock/execution';
import { makeConfig } from '../../../../test/factories/config.factory.js';
import { FakeRuntime } from '../../../../test/fakes/fake-sandbox.js';
import { hostWithFakes, sessionSpec } from '../session-host.spec-helper.js';
import { WarmSandboxPool } from './warm-sandbox-pool.js';

const settle = () => new Promise((r) => setImmediate(r));

function pool(env: Record<string, string> = {}) {
  const config = makeConfig({ WORKER_POOL_SIZE: '2', ...env });
  const runtime = new FakeRuntime();
  return { sut: new WarmSandboxPool(config, runtime), runtime, config };
}

describe(WarmSandboxPool.name, () => {
  const asDefault = (config: ReturnType<typeof makeConfig>): Pick<SandboxSpec, 'limits' | 'storage'> => ({
    limits: { ...config.defaultLimits },
  });

  it('should start WORKER_POOL_SIZE sandboxes with no tenant, and refill after a take', async () => {
    const { sut, runtime, config } = pool();
    sut.start();
    await settle();
    expect(sut.status).toEqual({ size: 2, ready: 2, starting: 0 });
    expect(runtime.created).toHaveLength(2);

    const taken = sut.take(asDefault(config));
    expect(taken).toBe(runtime.created[0]);
    await settle();
    expect(sut.status).toEqual({ size: 2, ready: 2, starting: 0 });
    expect(runtime.created).toHaveLength(3);
    // Never handed out twice.
    expect([sut.take(asDefault(config)), sut.take(asDefault(config))]).not.toContain(taken);
  });

  it('should serve only the default container limits, tmpfs storage and no dataset mounts', async () => {
    const { sut, config } = pool();
    sut.start();
    await settle();
    const limits = config.defaultLimits;
    expect(sut.take({ limits: { ...limits, memoryMb: limits.memoryMb * 2 } })).toBeNull();
    expect(sut.take({ limits, storage: 'bind' })).toBeNull();
    expect(sut.take({ limits, readOnlyMounts: [{ name: 'd', hostPath: '/srv/d' }] })).toBeNull();
    // Per-run limits do not shape the container: a longer timeout still takes one.
    expect(sut.take({ limits: { ...limits, timeoutMs: limits.timeoutMs * 2 } })).not.toBeNull();
  });

  it('should skip a pooled sandbox that died and destroy it', async () => {
    const { sut, runtime, config } = pool();
    sut.start();
    await settle();
    runtime.created[0]!.alive = false;
    const destroyed = jest.spyOn(runtime.created[0]!, 'destroy');
    expect(sut.take(asDefault(config))).toBe(runtime.created[1]);
    expect(destroyed).toHaveBeenCalled();
  });

  it('should start nothing with WORKER_POOL_SIZE=0', async () => {
    const { sut, runtime, config } = pool({ WORKER_POOL_SIZE: '0' });
    sut.start();
    await settle();
    expect(runtime.created).toHaveLength(0);
    expect(sut.take(asDefault(config))).toBeNull();
  });

  it('should destroy what waits on close and stop refilling', async () => {
    const { sut, runtime, config } = pool();
    sut.start();
    await settle();
    await sut.close();
    expect(runtime.created.map((s) => s.alive)).toEqual([false, false]);
    expect(sut.take(asDefault(config))).toBeNull();
    await settle();
    expect(runtime.created).toHaveLength(2);
  });

  it('should back off instead of looping when starting fails', async () => {
    jest.useFakeTimers();
    try {
      const { sut, runtime } = pool();
      let attempts = 0;
      runtime.create = async () => {
        attempts++;
        throw new Error('no such image');
      };
      sut.start();
      await jest.advanceTimersByTimeAsync(0);
      expect(attempts).toBe(2);
      await jest.advanceTimersByTimeAsync(900);
      expect(attempts).toBe(2);
      await jest.advanceTimersByTimeAsync(200);
      expect(attempts).toBe(4);
      await sut.close();
    } finally {
      jest.useRealTimers();
    }
  });

  it("should keep a pool per template as told, serving only that template's image", async () => {
    const { sut, runtime, config } = pool({ WORKER_POOL_SIZE: '1' });
    const image = '127.0.0.1:5000/drydock-templates/tpl_a@sha256:aa';
    sut.setTemplatePools([{ template: 'analytics:2', image, size: 2 }]);
    sut.start();
    await settle();
    expect(sut.status).toEqual({ size: 1, ready: 1, starting: 0, templates: [{ template: 'analytics:2', size: 2, ready: 2, starting: 0 }] });
    expect(runtime.specs.map((s) => s?.image)).toEqual([undefined, image, image]);
    expect(runtime.specs.every((s) => s?.tenantId === 'none')).toBe(true);

    const limits = config.defaultLimits;
    const taken = sut.take({ limits, image });
    expect(runtime.specs[runtime.created.indexOf(taken as never)]?.image).toBe(image);
    // The default pool never hands out a template's sandbox, nor the other way round,
    // and an image without a pool starts cold.
    expect(runtime.specs[runtime.created.indexOf(sut.take({ limits }) as never)]?.image).toBeUndefined();
    expect(sut.take({ limits, image: `${image}b` })).toBeNull();
    expect(sut.take({ limits: { ...limits, memoryMb: limits.memoryMb * 2 }, image })).toBeNull();
    await settle();
    expect(sut.status.templates).toEqual([{ template: 'analytics:2', size: 2, ready: 2, starting: 0 }]);
    await sut.close();
  });

  it('should replace the pool of an older version and destroy what waits in a pool no longer wanted', async () => {
    const { sut, runtime } = pool({ WORKER_POOL_SIZE: '0' });
    sut.start();
    sut.setTemplatePools([{ template: 'analytics:2', image: 'img@sha256:2', size: 1 }]);
    await settle();
    const old = runtime.created[0]!;
    sut.setTemplatePools([{ template: 'analytics:3', image: 'img@sha256:3', size: 1 }]);
    await settle();
    expect(old.alive).toBe(false);
    expect(sut.status.templates).toEqual([{ template: 'analytics:3', size: 1, ready: 1, starting: 0 }]);
    sut.setTemplatePools([]);
    expect(runtime.created[1]!.alive).toBe(false);
    expect(sut.status).toEqual({ size: 0, ready: 0, starting: 0 });
  });

  it('should hand a pooled sandbox to a new session, and destroy it with the session', async () => {
    const host = hostWithFakes({ env: { WORKER_POOL_SIZE: '1' } });
    host.lifecycle.open();
    await settle();
    const pooled = host.runtime.created[0]!;
    const started = await host.lifecycle.start(sessionSpec({ limits: { ...host.config.defaultLimits } }));
    expect(started.containerId).toBe(pooled.id);
    await host.lifecycle.stop(started.sessionId);
    expect(pooled.alive).toBe(false);
    await settle();
    // The refill is a new sandbox, never the one the session had.
    expect(host.pool.status.ready).toBe(1);
    expect(host.runtime.created[1]).not.toBe(pooled);
    await host.lifecycle.shutdown();
  });
});
