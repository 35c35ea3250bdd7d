import type { WorkerInfo, WorkerRegistry } from '@drydock/sessions';
import { makeConfig } from '../../../../test/factories/config.factory.js';
import { FakeRuntime } from '../../../../test/fakes/fake-sandbox.js';
import { OrphanContainerSweeper } from './orphan-container.sweeper.js';

const NOW = 1_000_000_000;
const TTL = 10_000;

function sweeper(present: { workerId: string; newestCreatedAt: number }[], live: string[]) {
  const runtime = new FakeRuntime();
  const removed: string[] = [];
  runtime.sandboxWorkers = async () => present;
  runtime.removeOrphans = async (workerId: string) => {
    removed.push(workerId);
    return 2;
  };
  const workers = { listLive: async () => live.map((id) => ({ id }) as WorkerInfo) } as unknown as WorkerRegistry;
  const config = makeConfig({ WORKER_ID: 'me', WORKER_HEARTBEAT_TTL_MS: String(TTL) });
  return { sut: new OrphanContainerSweeper(config, runtime, workers), removed };
}

describe(OrphanContainerSweeper.name, () => {
  it('should remove the containers of a worker that is gone', async () => {
    const { sut, removed } = sweeper([{ workerId: 'dead', newestCreatedAt: NOW - 60_000 }], ['other']);
    expect(await sut.sweep(NOW)).toEqual(['dead']);
    expect(removed).toEqual(['dead']);
  });

  it('should never touch a live worker\'s, its own, or a worker\'s that may be starting', async () => {
    const { sut, removed } = sweeper(
      [
        { workerId: 'live', newestCreatedAt: NOW - 60_000 },
        { workerId: 'me', newestCreatedAt: NOW - 60_000 },
        { workerId: 'starting', newestCreatedAt: NOW - TTL / 2 },
      ],
      ['live'],
    );
    expect(await sut.sweep(NOW)).toEqual([]);
    expect(removed).toEqual([]);
  });
});
