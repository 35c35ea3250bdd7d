import { randomBytes } from 'node:crypto';
import { Queue } from 'bullmq';
import { Redis } from 'ioredis';
import { MAINTENANCE_QUEUE, MaintenanceJob } from '@drydock/execution';
import { WorkerHeartbeat } from '@drydock/session-host';
import { MaintenanceProcessor } from '../../apps/worker/src/processors/maintenance.processor.js';
import { MaintenanceSchedule, nextRunOf, type MaintenancePeriods } from '../../apps/worker/src/registry/maintenance-schedule.js';
import { startPlatform, type Platform } from './support/platform.js';

// The housekeeping every worker shares (session sweeps, artifact expiry, batch
// maintenance) runs from BullMQ job schedulers on one queue. These tests hold what keeps
// it running: a scheduler left with no next run is scheduled again, and a worker whose
// drain fails still closes its queue consumers when it is stopped.
describe('Maintenance schedule', () => {
  const PERIODS: MaintenancePeriods = {
    [MaintenanceJob.SweepSessions]: 30_000,
    [MaintenanceJob.ExpireArtifacts]: 60_000,
    [MaintenanceJob.BatchMaintenance]: 90_000,
    [MaintenanceJob.TemplateMaintenance]: 120_000,
    [MaintenanceJob.EgressLogRetention]: 150_000,
  };
  const NAMES = Object.values(MaintenanceJob);
  // A next run waits for its time (delayed) or, when due, for a worker (waiting).
  const PENDING = ['delayed', 'waiting'];
  let redis: Redis;

  beforeAll(() => {
    redis = new Redis(process.env.REDIS_URL ?? 'redis://127.0.0.1:6379/15', { maxRetriesPerRequest: null });
  });

  afterAll(async () => {
    redis?.disconnect();
  });

  // The job holding a scheduler's next run, and what state it is in.
  const nextRun = async (queue: Queue, name: string) => {
    const { scheduler, id, state } = await nextRunOf(queue, name);
    return { id, every: scheduler?.every, state };
  };
  // What a worker killed between taking a run and adding the next one leaves behind:
  // the scheduler points at a run no worker will ever take.
  // `healedBy`: a running worker may put it back before it can be looked at (its reaper
  // ticks every 300 ms), so there only the lost id is returned.
  const loseNextRun = async (queue: Queue, name: string, healedBy: 'nobody' | 'a worker' = 'nobody') => {
    const { id } = await nextRun(queue, name);
    const prefix = `${queue.opts.prefix ?? 'bull'}:${queue.name}`;
    await redis.multi().zrem(`${prefix}:delayed`, id).lrem(`${prefix}:wait`, 0, id).del(`${prefix}:${id}`).exec();
    if (healedBy === 'nobody') expect((await nextRun(queue, name)).state).toBe('unknown');
  };

  describe('on its own queue', () => {
    let queue: Queue;

    beforeEach(() => {
      queue = new Queue(`test-maintenance-${randomBytes(4).toString('hex')}`, { connection: redis });
    });

    afterEach(async () => {
      await queue.obliterate({ force: true });
      await queue.close();
    });

    it('should schedule each job at its period, with one pending next run', async () => {
      await new MaintenanceSchedule(queue, PERIODS).ensure();
      for (const name of NAMES) {
        const next = await nextRun(queue, name);
        expect(next.every).toBe(PERIODS[name]);
        expect(PENDING).toContain(next.state);
      }
    });

    it('should take a changed period from the next run on, without the old period\'s offset', async () => {
      // Scheduled every 5 minutes first (the default expiry), then every 500 ms.
      await new MaintenanceSchedule(queue, { ...PERIODS, [MaintenanceJob.ExpireArtifacts]: 300_000 }).ensure();
      await new MaintenanceSchedule(queue, { ...PERIODS, [MaintenanceJob.ExpireArtifacts]: 500 }).ensure();
      const scheduler = await queue.getJobScheduler(MaintenanceJob.ExpireArtifacts);
      expect(Number(scheduler?.every)).toBe(500);
      // The offset places runs within the period; one carried over from the 5-minute
      // period put every run after a late one up to 5 minutes away.
      expect(Number(scheduler?.offset ?? 0)).toBeLessThan(500);
      expect(Number(scheduler?.next) - Date.now()).toBeLessThanOrEqual(500);
      expect(PENDING).toContain((await nextRun(queue, MaintenanceJob.ExpireArtifacts)).state);
    });

    it('should leave a healthy schedule as it is, even to a worker with other periods', async () => {
      await new MaintenanceSchedule(queue, PERIODS).ensure();
      const before = await Promise.all(NAMES.map((name) => nextRun(queue, name)));
      const other = new MaintenanceSchedule(queue, { ...PERIODS, [MaintenanceJob.ExpireArtifacts]: 1_000 });
      expect(await other.heal()).toEqual([]);
      expect(await Promise.all(NAMES.map((name) => nextRun(queue, name)))).toEqual(before);
    });

    it('should put back a next run that was lost, and only that one', async () => {
      const schedule = new MaintenanceSchedule(queue, PERIODS);
      await schedule.ensure();
      const sweeps = await nextRun(queue, MaintenanceJob.SweepSessions);
      await loseNextRun(queue, MaintenanceJob.ExpireArtifacts);

      expect(await schedule.heal()).toEqual([MaintenanceJob.ExpireArtifacts]);
      const expiry = await nextRun(queue, MaintenanceJob.ExpireArtifacts);
      expect(expiry.every).toBe(PERIODS[MaintenanceJob.ExpireArtifacts]);
      expect(PENDING).toContain(expiry.state);
      expect(await nextRun(queue, MaintenanceJob.SweepSessions)).toEqual(sweeps);
      expect(await schedule.heal()).toEqual([]);
    });
  });

  describe('in a running worker', () => {
    let platform: Platform;

    beforeAll(async () => {
      // The reaper's tick (which also checks the schedule) every 300 ms.
      platform = await startPlatform({ SESSION_REAPER_INTERVAL_MS: '300' });
    });

    afterAll(async () => {
      await platform?.close();
    });

    it('should schedule a lost next run again within a reaper tick', async () => {
      const queue = new Queue(MAINTENANCE_QUEUE, { connection: redis });
      try {
        // (The healed run may take the lost one's id: both are the same period's slot.)
        await loseNextRun(queue, MaintenanceJob.BatchMaintenance, 'a worker');
        const deadline = Date.now() + 10_000;
        let state = 'unknown';
        while (Date.now() < deadline) {
          state = (await nextRun(queue, MaintenanceJob.BatchMaintenance)).state;
          if (PENDING.includes(state)) break;
          await new Promise((r) => setTimeout(r, 100));
        }
        expect(PENDING).toContain(state);
      } finally {
        await queue.close();
      }
    });

    it('should close its queue consumers when stopped even if its drain fails', async () => {
      const worker = await platform.addWorker();
      const consumer = worker.app.get(MaintenanceProcessor).worker;
      expect(consumer.isRunning()).toBe(true);
      // Redis refusing the state change at the start of the drain.
      worker.app.get(WorkerHeartbeat).setState = () => Promise.reject(new Error('Connection is closed.'));

      await expect(worker.stop()).resolves.toBeUndefined();
      expect(consumer.isRunning()).toBe(false);
      // Its warm pool went too: no container, and so no channel held open to one.
      const left = await platform.docker.listContainers({ all: true, filters: { label: [`drydock.worker=${worker.id}`] } });
      expect(left).toEqual([]);
    });
  });
});
