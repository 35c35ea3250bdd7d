import { DataSource } from 'typeorm';
import { startPlatform, type Platform } from './support/platform.js';
import { startWorkerProcess, type WorkerProcess } from './support/worker-process.js';
import { pollUntil } from './support/until.js';

const LOCK_MS = '3000';

// A worker process killed with SIGKILL in the middle of a batch, another worker alive:
// BullMQ hands the killed worker's items to the live one once their locks lapse, and
// every item ends with exactly one record.
describe('Batches when a worker is killed', () => {
  let platform: Platform;
  let doomed: WorkerProcess | null = null;

  beforeAll(async () => {
    // The platform's own worker takes no batch items: at first only the doomed one does.
    platform = await startPlatform({ WORKER_BATCH_CONCURRENCY: '0', BATCH_LOCK_MS: LOCK_MS });
  });

  afterAll(async () => {
    await doomed?.kill('SIGKILL');
    // The killed worker cannot remove its containers; the platform worker's orphan sweep
    // would after the heartbeat TTL (orphans.e2e-spec.ts); remove them now.
    if (doomed) {
      const left = await platform.docker.listContainers({ all: true, filters: { label: [`drydock.worker=${doomed.id}`] } });
      await Promise.allSettled(left.map((c) => platform.docker.getContainer(c.Id).remove({ force: true })));
    }
    await platform?.close();
  });

  it('should give every item exactly one record after a worker is SIGKILLed mid-batch', async () => {
    doomed = await startWorkerProcess({ WORKER_BATCH_CONCURRENCY: '3', BATCH_LOCK_MS: LOCK_MS });
    const api = await platform.newTenant({ batchConcurrency: 9 });
    const items = Array.from({ length: 9 }, (_, i) => ({ code: `import time\ntime.sleep(2)\nprint(${i})`, id: `k${i}` }));
    const submitted = await api.post('/v1/batches', { items, concurrency: 9 });
    expect(submitted.status).toBe(202);
    const id = submitted.body.id;
    const db = platform.gateway.get(DataSource);
    await until(async () => {
      const rows = await db.query(`SELECT count(*)::int AS n FROM batch_items WHERE batch_id = $1 AND status = 'running' AND worker_id = $2`, [id, doomed!.id]);
      return rows[0].n === 3;
    });
    await doomed.kill('SIGKILL');
    expect(doomed.child.signalCode).toBe('SIGKILL');

    const survivor = await platform.addWorker({ WORKER_BATCH_CONCURRENCY: '3', BATCH_LOCK_MS: LOCK_MS });
    try {
      const done = await finished(api, id);
      expect(done).toMatchObject({ status: 'completed', total: 9, counts: { ok: 9, queued: 0, running: 0, killed: 0, error: 0 } });
      const records = (await api.get(`/v1/batches/${id}/items?limit=100`)).body.items;
      expect(records).toHaveLength(9);
      for (const item of records) expect(item).toMatchObject({ id: `k${item.index}`, status: 'ok', stdout: `${item.index}\n` });
      // The three the killed worker held ran a second time, on the survivor.
      const rerun = records.filter((i: { attempts: number }) => i.attempts === 2);
      expect(rerun).toHaveLength(3);
      const workers = await db.query(`SELECT DISTINCT worker_id FROM batch_items WHERE batch_id = $1`, [id]);
      expect(workers.map((w: { worker_id: string }) => w.worker_id)).toEqual([survivor.id]);
    } finally {
      await survivor.stop();
    }
  });
});

async function finished(api: { get(path: string): Promise<{ body: any }> }, id: string, timeoutMs = 60_000) {
  const deadline = Date.now() + timeoutMs;
  for (;;) {
    const batch = (await api.get(`/v1/batches/${id}`)).body;
    if (batch.status === 'completed' && batch.counts.running === 0) return batch;
    if (Date.now() > deadline) throw new Error(`batch ${id} did not finish: ${JSON.stringify(batch)}`);
    await new Promise((r) => setTimeout(r, 200));
  }
}

const until = (check: () => Promise<boolean>, timeoutMs = 30_000) => pollUntil(check, timeoutMs, 50);
