import type { WorkerInfo, WorkerRegistry } from '@drydock/sessions';
import type { SandboxRuntime } from '@drydock/execution';
import { makeConfig } from '../../../../test/factories/config.factory.js';
import { FakeRuntime } from '../../../../test/fakes/fake-sandbox.js';
import type { HostedSessionRegistry } from '../hosting/hosted-session.registry.js';
import type { SessionActivity } from '../lifecycle/session-activity.js';
import { WorkerHeartbeat } from './worker-heartbeat.js';
import type { WarmSandboxPool } from '../sandboxes/warm-sandbox-pool.js';

class RecordingRegistry implements WorkerRegistry {
  beats: WorkerInfo[] = [];
  async heartbeat(info: WorkerInfo) {
    this.beats.push(info);
  }
  async deregister() {}
  async listLive() {
    return this.beats.slice(-1);
  }
  async isLive() {
    return true;
  }
  drain = false;
  async requestDrain() {
    this.drain = true;
  }
  async drainRequested() {
    return this.drain;
  }
  async clearDrainRequest() {
    this.drain = false;
  }
}

const never = () => new Promise<never>(() => undefined);

function heartbeat(runtime: SandboxRuntime, flush: () => Promise<void> = async () => undefined) {
  const registry = new RecordingRegistry();
  const config = makeConfig({ WORKER_HEARTBEAT_MS: '50' });
  const hosted = { size: 3 } as HostedSessionRegistry;
  const activity = { flush } as SessionActivity;
  const pool = { status: { size: 2, ready: 1, starting: 1 } } as WarmSandboxPool;
  const sut = new WorkerHeartbeat(config, runtime, registry, hosted, activity, pool);
  return { sut, registry };
}

describe(WorkerHeartbeat.name, () => {
  it('should announce the worker with its load and a healthy engine', async () => {
    const { sut, registry } = heartbeat(new FakeRuntime());
    await sut.beat();
    expect(registry.beats).toHaveLength(1);
    expect(registry.beats[0]).toMatchObject({
      id: 'unit-worker',
      sessions: 3,
      dockerHealthy: true,
      pool: { size: 2, ready: 1, starting: 1 },
    });
  });

  it('should still beat, reporting the engine unhealthy, when the engine does not answer within a period', async () => {
    const runtime = Object.assign(new FakeRuntime(), { healthy: never });
    const { sut, registry } = heartbeat(runtime);
    const started = Date.now();
    await sut.beat();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(registry.beats[0]).toMatchObject({ dockerHealthy: false });
  });

  it('should beat even when recording session activity fails or hangs, and not pile flushes up', async () => {
    const failing = heartbeat(new FakeRuntime(), async () => Promise.reject(new Error('database down')));
    await failing.sut.beat();
    await failing.sut.beat();
    expect(failing.registry.beats).toHaveLength(2);

    let flushes = 0;
    const hanging = heartbeat(new FakeRuntime(), () => (flushes++, never()));
    for (let period = 0; period < 3; period++) {
      void hanging.sut.beat();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Every period still announces the worker; the stuck flush is not started again.
    expect(hanging.registry.beats).toHaveLength(3);
    expect(flushes).toBe(1);
  });

  it("should hand an operator's drain request to whoever registered for it, once, and announce the new state", async () => {
    const { sut, registry } = heartbeat(new FakeRuntime());
    let requests = 0;
    sut.whenDrainRequested(() => {
      requests++;
      void sut.setState('draining');
    });
    await sut.beat();
    expect(requests).toBe(0);
    await registry.requestDrain();
    await sut.beat();
    await new Promise((resolve) => setTimeout(resolve, 10));
    await sut.beat();
    expect(requests).toBe(1);
    expect(registry.beats[registry.beats.length - 1]).toMatchObject({ state: 'draining' });
  });
});
