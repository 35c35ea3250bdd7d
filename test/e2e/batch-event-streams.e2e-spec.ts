import { createRedis, type AppConfig } from '@drydock/core';
import {
  batchEventsChannel,
  BatchEventStreams,
  type BatchEvent,
  type BatchesRepository,
  type BatchRecord,
  type BatchStreamEvent,
} from '@drydock/batches';

// GET /v1/batches/:id/events over a real Redis: an item that ends while the stream opens
// (between its first read of the counts and its first event) is not lost.
describe(BatchEventStreams.name, () => {
  const redisUrl = process.env.REDIS_URL!;
  const publisher = createRedis(redisUrl, 'test-batch-events');
  let sut: BatchEventStreams;

  afterEach(async () => {
    await sut?.onApplicationShutdown();
  });

  afterAll(async () => {
    await publisher.quit();
  });

  const batch = (id: string, counts: Partial<BatchRecord['counts']>, status: BatchRecord['status']): BatchRecord => ({
    id,
    tenantId: 'ten_streams',
    status,
    total: 2,
    counts: { queued: 0, running: 0, ok: 0, error: 0, timeout: 0, memory: 0, killed: 0, cancelled: 0, ...counts },
    limits: {} as BatchRecord['limits'],
    timeoutMs: 1000,
    concurrency: 2,
    idempotencyKey: null,
    metadata: null,
    template: null,
    image: null,
    network: null,
    createdAt: new Date(),
    startedAt: new Date(),
    finishedAt: null,
  });

  it('should report an item that ends while the stream reads the batch for the first time', async () => {
    const id = `bat_streams_${Date.now()}`;
    const reads: BatchRecord[] = [
      // The first read: both items running. Item 0 ends just after it is taken.
      batch(id, { running: 2 }, 'running'),
      // Every later read: both ended.
      batch(id, { ok: 2 }, 'completed'),
    ];
    let n = 0;
    const repository = {
      findById: async () => {
        const record = reads[Math.min(n++, reads.length - 1)]!;
        if (n === 1) {
          const ended: BatchEvent = { type: 'item', index: 0, id: 'first', status: 'ok' };
          // Published (and delivered to any subscriber) before the read returns.
          await publisher.publish(batchEventsChannel(id), JSON.stringify(ended));
        }
        return record;
      },
    } as unknown as BatchesRepository;
    sut = new BatchEventStreams({ redisUrl } as AppConfig, repository);

    const events: BatchStreamEvent[] = [];
    for await (const event of sut.follow('ten_streams', id, new AbortController().signal)) events.push(event);

    expect(events[0]).toMatchObject({ event: 'progress', data: { counts: { running: 2, ok: 0 } } });
    expect(events.filter((e) => e.event === 'item').map((e) => e.data)).toEqual([{ index: 0, id: 'first', status: 'ok' }]);
    expect(events[events.length - 1]).toMatchObject({ event: 'done', data: { status: 'completed' } });
  });
});
