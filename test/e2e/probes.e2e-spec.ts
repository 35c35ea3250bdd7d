import { startPlatform, type Platform } from './support/platform.js';

// Terminus probes: /health/live (the process answers) and /health/ready (PostgreSQL,
// Redis and an active worker that reaches Docker); /health keeps its own contract.
describe('Gateway probes', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ WORKER_HEARTBEAT_TTL_MS: '3000', WORKER_HEARTBEAT_MS: '500' });
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should be live and ready with a worker, and not ready without one while staying live', async () => {
    const live = await platform.anonymous.get('/health/live');
    expect([live.status, live.body.status]).toEqual([200, 'ok']);
    const ready = await platform.anonymous.get('/health/ready');
    expect(ready.status).toBe(200);
    expect(ready.body).toMatchObject({ status: 'ok', info: { database: { status: 'up' }, redis: { status: 'up' }, workers: { status: 'up' } } });
    expect(ready.body.info.workers.reachDocker).toBeGreaterThanOrEqual(1);
    expect((await platform.anonymous.get('/health')).status).toBe(200);

    // Its only worker leaves (SIGTERM path: drained and deregistered).
    await platform.stopWorker();
    const deadline = Date.now() + 15_000;
    let notReady = await platform.anonymous.get('/health/ready');
    while (notReady.status === 200 && Date.now() < deadline) {
      await new Promise((r) => setTimeout(r, 200));
      notReady = await platform.anonymous.get('/health/ready');
    }
    expect(notReady.status).toBe(503);
    expect(notReady.body).toMatchObject({ status: 'error', error: { workers: { status: 'down' } }, info: { database: { status: 'up' } } });
    expect((await platform.anonymous.get('/health/live')).status).toBe(200);
  });
});
