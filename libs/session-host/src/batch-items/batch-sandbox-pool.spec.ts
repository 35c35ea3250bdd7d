import type { StartedItem } from '@drydock/batches';
import { makeConfig } from '../../../../test/factories/config.factory.js';
import { makeLimits } from '../../../../test/factories/limits.factory.js';
import { FakeRuntime, type FakeSandbox } from '../../../../test/fakes/fake-sandbox.js';
import type { WorkerEgress } from '../egress/worker-egress.js';
import { BatchSandboxPool } from './batch-sandbox-pool.js';

const item = (batchId: string, index: number): StartedItem => ({
  ref: { batchId, tenantId: 'ten_1', index },
  clientId: null,
  image: null,
  code: '1',
  files: null,
  attempt: 1,
  limits: makeLimits(),
  timeoutMs: 1000,
  network: null,
});

describe(BatchSandboxPool.name, () => {
  let runtime: FakeRuntime;
  // The items each sandbox key was said to serve, as the egress log would record them.
  let attributed: [string, number][];
  const egress: Pick<WorkerEgress, 'attribute'> = { attribute: (key, index) => void attributed.push([key, index]) };
  const pool = (env: Record<string, string> = {}) => new BatchSandboxPool(makeConfig(env), runtime, egress as WorkerEgress);

  beforeEach(() => {
    runtime = new FakeRuntime();
    attributed = [];
  });

  it('should recycle a sandbox and give it to the next item of the same batch', async () => {
    const sut = pool();
    const first = await sut.acquire(item('bat_a', 0));
    sut.release('bat_a', first, true);
    const second = await sut.acquire(item('bat_a', 1));
    expect(second.sandbox).toBe(first.sandbox);
    expect((second.sandbox as FakeSandbox).recycles).toBe(1);
    expect(second.uses).toBe(1);
    expect(runtime.created).toHaveLength(1);
    await sut.destroyAll();
  });

  it("should create a batch sandbox with the batch's network and move its egress attribution to each item it serves", async () => {
    const sut = pool();
    const first = await sut.acquire({ ...item('bat_a', 0), network: { allow: ['pypi.org'] } });
    expect(runtime.specs[0]).toMatchObject({ sessionId: 'bat_a-0', batch: { batchId: 'bat_a', item: 0 }, network: { allow: ['pypi.org'] } });
    expect(attributed).toEqual([]);
    sut.release('bat_a', first, true);
    const second = await sut.acquire({ ...item('bat_a', 3), network: { allow: ['pypi.org'] } });
    expect(second.key).toBe('bat_a-0');
    expect(attributed).toEqual([['bat_a-0', 3]]);
    await sut.destroyAll();
  });

  it('should never give a sandbox to an item of another batch', async () => {
    const sut = pool();
    const first = await sut.acquire(item('bat_a', 0));
    sut.release('bat_a', first, true);
    const other = await sut.acquire(item('bat_b', 0));
    expect(other.sandbox).not.toBe(first.sandbox);
    await sut.destroyAll();
  });

  it('should destroy a sandbox that is not clean after recycling, or not reusable, or when recycling is off', async () => {
    const sut = pool();
    const dirty = await sut.acquire(item('bat_a', 0));
    (dirty.sandbox as FakeSandbox).recycleProblems = ['a process of the sandbox user survived: sleep'];
    sut.release('bat_a', dirty, true);
    const next = await sut.acquire(item('bat_a', 1));
    expect(next.sandbox).not.toBe(dirty.sandbox);
    expect(dirty.sandbox.alive).toBe(false);

    sut.release('bat_a', next, false);
    expect(next.sandbox.alive).toBe(false);

    const off = pool({ BATCH_RECYCLE_SANDBOXES: 'false' });
    const once = await off.acquire(item('bat_c', 0));
    off.release('bat_c', once, true);
    expect(once.sandbox.alive).toBe(false);
    expect((once.sandbox as FakeSandbox).recycles).toBe(0);
  });
});
