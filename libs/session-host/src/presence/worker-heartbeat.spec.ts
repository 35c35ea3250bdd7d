import type { WorkerInfo, WorkerRegistry } from '@drydock/sessions';
import type { SandboxRuntime } from '@drydock/execution';
import { makeConfig } from '../../../../test/factories/config.factory.js';
import { FakeRuntime } from '../../../../test/fakes/fake-sandbox.js';
import type { SessionHostService } from '../sessions/session-host.service.js';
import { WorkerLifecycleService } from './worker-lifecycle.service.js';

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
}

const never = () => new Promise<never>(() => undefined);

function lifecycle(runtime: SandboxRuntime, host: Partial<SessionHostService> = {}) {
  const registry = new RecordingRegistry();
  const config = makeConfig({ WORKER_HEARTBEAT_MS: '50' });
  const fullHost = { size: 3, flushActivity: async () => undefined, ...host } as SessionHostService;
  const service = new WorkerLifecycleService(config, runtime, registry, {} as never, fullHost, {} as never, {} as never);
  return { service, registry };
}

describe('WorkerLifecycleService.heartbeat', () => {
  it('announces the worker with its load and a healthy engine', async () => {
    const { service, registry } = lifecycle(new FakeRuntime());
    await service.heartbeat();
    expect(registry.beats).toHaveLength(1);
    expect(registry.beats[0]).toMatchObject({ id: 'unit-worker', sessions: 3, dockerHealthy: true });
  });

  it('still beats, reporting the engine unhealthy, when the engine does not answer within a period', async () => {
    const runtime = Object.assign(new FakeRuntime(), { healthy: never });
    const { service, registry } = lifecycle(runtime);
    const started = Date.now();
    await service.heartbeat();
    expect(Date.now() - started).toBeLessThan(1_000);
    expect(registry.beats[0]).toMatchObject({ dockerHealthy: false });
  });

  it('beats even when recording session activity fails or hangs, and does not pile flushes up', async () => {
    const failing = lifecycle(new FakeRuntime(), { flushActivity: async () => Promise.reject(new Error('database down')) });
    await failing.service.heartbeat();
    await failing.service.heartbeat();
    expect(failing.registry.beats).toHaveLength(2);

    let flushes = 0;
    const hanging = lifecycle(new FakeRuntime(), { flushActivity: () => (flushes++, never()) });
    for (let period = 0; period < 3; period++) {
      void hanging.service.heartbeat();
      await new Promise((resolve) => setTimeout(resolve, 20));
    }
    // Every period still announces the worker; the stuck flush is not started again.
    expect(hanging.registry.beats).toHaveLength(3);
    expect(flushes).toBe(1);
  });
});
