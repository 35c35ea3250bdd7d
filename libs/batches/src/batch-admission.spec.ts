import type { TenantsRepository } from '@drydock/core';
import { makeConfig } from '../../../test/factories/config.factory.js';
import { BatchAdmission } from './batch-admission.js';
import type { BatchItemRef } from './batch.types.js';
import type { BatchQueue } from './batch-queue.js';
import type { BatchesRepository } from './batches.repository.js';

function setup(limits: Record<string, number> = {}) {
  const asked: { tenantId: string; limit: number }[] = [];
  const repo = {
    admit: async (tenantId: string, limit: number): Promise<BatchItemRef[]> => {
      asked.push({ tenantId, limit });
      return [{ batchId: 'bat_1', tenantId, index: 0 }];
    },
  } as unknown as BatchesRepository;
  const queued: BatchItemRef[][] = [];
  const queue = { enqueue: async (items: BatchItemRef[]) => void queued.push(items) } as unknown as BatchQueue;
  let lookups = 0;
  const tenants = {
    findById: async (id: string) => (lookups++, { id, name: id, limits, createdAt: new Date(), updatedAt: new Date() }),
  } as unknown as TenantsRepository;
  const sut = new BatchAdmission(makeConfig({ BATCH_TENANT_CONCURRENCY: '6' }), repo, queue, tenants);
  return { sut, asked, queued, queue, lookups: () => lookups };
}

describe(BatchAdmission.name, () => {
  it('should admit up to the tenant limit, else the platform default, and queue what it admitted', async () => {
    const limited = setup({ batchConcurrency: 2 });
    expect(await limited.sut.admit('ten_a')).toBe(1);
    expect(limited.asked).toEqual([{ tenantId: 'ten_a', limit: 2 }]);
    expect(limited.queued).toEqual([[{ batchId: 'bat_1', tenantId: 'ten_a', index: 0 }]]);
    const defaulted = setup();
    await defaulted.sut.admit('ten_b');
    expect(defaulted.asked[0]!.limit).toBe(6);
  });

  it('should not look the tenant up again for every item', async () => {
    const { sut, lookups } = setup();
    await sut.admit('ten_a');
    await sut.admit('ten_a');
    expect(lookups()).toBe(1);
  });

  it('should leave items admitted, not fail, when queueing them fails (maintenance queues them)', async () => {
    const { sut, queue } = setup();
    queue.enqueue = async () => Promise.reject(new Error('redis down'));
    await expect(sut.admit('ten_a')).resolves.toBe(1);
  });
});
