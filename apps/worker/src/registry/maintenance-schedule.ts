import type { JobSchedulerJson, Queue } from 'bullmq';
import { MaintenanceJob } from '@drydock/execution';

// The housekeeping jobs every worker schedules on the shared maintenance queue, each at
// its period: one run per period, on whichever worker takes it.
export type MaintenanceJobName = (typeof MaintenanceJob)[keyof typeof MaintenanceJob];
export type MaintenancePeriods = Record<MaintenanceJobName, number>;

const JOB_OPTIONS = { removeOnComplete: true, removeOnFail: 100 } as const;
// A scheduler's next run is healthy while its job waits for its time or for a worker.
const PENDING = new Set(['delayed', 'waiting', 'prioritized']);

// BullMQ adds a scheduler's next run when a worker takes the current one, in a call of
// its own after the take. A worker killed between the two (SIGKILL, the OOM killer), or
// one whose Redis call fails there, leaves the scheduler with no next run: that job would
// never run again until some worker restarts. Every worker checks on its reaper tick and
// puts a missing next run back; a healthy scheduler is left as it is, so workers started
// with different periods do not undo each other's schedule.
export class MaintenanceSchedule {
  constructor(
    private readonly queue: Queue,
    private readonly periods: MaintenancePeriods,
  ) {}

  // At start-up: every worker upserts the same schedulers with its own periods.
  async ensure(): Promise<void> {
    for (const name of Object.values(MaintenanceJob)) await this.upsert(name);
  }

  // Returns the schedulers whose next run was missing and has been put back.
  async heal(): Promise<MaintenanceJobName[]> {
    const healed: MaintenanceJobName[] = [];
    for (const name of Object.values(MaintenanceJob)) {
      const { scheduler, state } = await nextRunOf(this.queue, name);
      if (PENDING.has(state)) continue;
      await this.upsert(name, scheduler);
      healed.push(name);
    }
    return healed;
  }

  private async upsert(name: MaintenanceJobName, current?: JobSchedulerJson | null): Promise<void> {
    const every = this.periods[name];
    // BullMQ keeps a scheduler's stored offset (where in its period it runs) when the
    // period changes, and after any late run aligns the next one to slot + that offset:
    // a 500 ms job once scheduled every 5 minutes then ran about once every 100 s. A
    // scheduler whose period changed is removed and created afresh.
    current ??= await this.queue.getJobScheduler(name);
    if (current && (Number(current.every) !== every || Number(current.offset ?? 0) >= every)) {
      await this.queue.removeJobScheduler(name);
    }
    await this.queue.upsertJobScheduler(name, { every }, { name, opts: JOB_OPTIONS });
  }
}

// A scheduler, the job holding its next run (BullMQ names it repeat:<scheduler>:<time>)
// and that job's state: 'unknown' when it is gone, or when there is no scheduler.
export async function nextRunOf(queue: Queue, name: string) {
  const scheduler = await queue.getJobScheduler(name);
  const id = `repeat:${name}:${scheduler?.next}`;
  const state = scheduler?.next === undefined ? 'unknown' : await queue.getJobState(id);
  return { scheduler, id, state };
}
