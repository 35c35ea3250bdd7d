import { startPlatform, type Platform } from './support/platform.js';
import { startWorkerProcess } from './support/worker-process.js';
import { pollUntil } from './support/until.js';

// A worker that dies and does not come back leaves containers on its Docker host; a live
// worker on the same host removes them once the dead one's heartbeat has lapsed, and
// leaves its own (and any live worker's) alone.
describe('Orphaned containers', () => {
  let platform: Platform;
  const fast = { WORKER_HEARTBEAT_MS: '300', WORKER_HEARTBEAT_TTL_MS: '2000', WORKER_ORPHAN_SWEEP_MS: '500', WORKER_POOL_SIZE: '1' };

  beforeAll(async () => {
    platform = await startPlatform(fast);
  });

  afterAll(async () => {
    await platform?.close();
  });

  const containersOf = async (workerId: string) =>
    platform.docker.listContainers({ all: true, filters: { label: [`drydock.worker=${workerId}`] } });
  const until = (check: () => Promise<boolean>, timeoutMs = 30_000) => pollUntil(check, timeoutMs, 200);

  it('should remove a SIGKILLed worker\'s containers after its heartbeat lapsed, and nothing of live workers', async () => {
    const doomed = await startWorkerProcess({ ...fast, WORKER_ORPHAN_SWEEP_MS: '0' });
    // Its pooled sandbox, at least.
    await until(async () => (await containersOf(doomed.id)).length > 0);
    await until(async () => (await containersOf(platform.workerId)).length > 0);
    const ours = (await containersOf(platform.workerId)).map((c) => c.Id).sort();

    await doomed.kill('SIGKILL');
    expect((await containersOf(doomed.id)).length).toBeGreaterThan(0);
    await until(async () => (await containersOf(doomed.id)).length === 0);
    // A sweep removes the volumes after the containers, in the same pass.
    const volumesOf = async (workerId: string) =>
      (await platform.docker.listVolumes({ filters: { label: [`drydock.worker=${workerId}`] } })).Volumes ?? [];
    await until(async () => (await volumesOf(doomed.id)).length === 0, 10_000);
    expect(await volumesOf(doomed.id)).toEqual([]);
    // The live worker's own are still there.
    const still = (await containersOf(platform.workerId)).map((c) => c.Id);
    expect(ours.every((id) => still.includes(id))).toBe(true);
  });
});
