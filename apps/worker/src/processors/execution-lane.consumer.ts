import { Logger } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { createRedis, withTimeout } from '@drydock/core';
import {
  EXECUTION_OUTCOME_TTL_S,
  executionLaneActiveKey,
  executionLaneKey,
  executionOutcomeKey,
  type ExecutionLaneJob,
  type ExecutionOutcome,
  type JobError,
  type JobReply,
} from '@drydock/execution';

// How long one blocking take waits before the loop looks at its own state again.
const TAKE_BLOCK_S = 1;
const RETRY_AFTER_ERROR_MS = 500;
// How much longer than a take stopping waits for it.
const STOP_GRACE_MS = 2_000;

export type LaneJobHandler = (job: ExecutionLaneJob) => Promise<JobReply>;

// Takes this worker's executions from its lane (docs/decisions/011-execution-lane.md):
// one blocking connection moves each job atomically to the `active` list (BLMOVE), up
// to `concurrency` run at once, and each ends with one MULTI that stores its outcome,
// publishes its reply and takes it off `active`.
export class ExecutionLaneConsumer {
  private readonly logger = new Logger(ExecutionLaneConsumer.name);
  private readonly lane: string;
  private readonly activeKey: string;
  private readonly running = new Set<Promise<void>>();
  private taker: Redis | null = null;
  private loop: Promise<void> | null = null;
  private taking = false;
  // Set while paused; resolves on resume.
  private resumed: Promise<void> | null = null;
  private release: (() => void) | null = null;
  private wake: (() => void) | null = null;

  constructor(
    private readonly redis: Redis,
    private readonly redisUrl: string,
    workerId: string,
    private readonly concurrency: number,
    private readonly handle: LaneJobHandler,
  ) {
    this.lane = executionLaneKey(workerId);
    this.activeKey = executionLaneActiveKey(workerId);
  }

  // Jobs a previous life of this worker took and never answered ran (or not) in
  // containers that are gone: each is answered `lost`, which its gateway, if it still
  // waits, records as a killed run on a lost worker.
  async start(): Promise<void> {
    const stale = await this.redis.lrange(this.activeKey, 0, -1);
    for (const payload of stale) {
      const job = parse(payload);
      if (job) await this.finish(payload, job, { lost: true }, null);
      else await this.redis.lrem(this.activeKey, 1, payload);
    }
    if (stale.length) this.logger.warn(`${stale.length} executions taken by this worker's previous run were answered as lost`);
    // It reconnects on its own; a take that fails is logged by the loop.
    this.taker = createRedis(this.redisUrl, 'drydock-worker-lane');
    this.taking = true;
    this.loop = this.takeLoop();
  }

  // Holds jobs until resume(): none starts (one a take already in flight brings in waits
  // in `active`); those running go on.
  pause(): void {
    this.resumed ??= new Promise<void>((resolve) => (this.release = resolve));
  }

  resume(): void {
    this.release?.();
    this.resumed = null;
    this.release = null;
  }

  // Stops taking jobs and waits up to `graceMs` for those taken; whether they all ended.
  async drain(graceMs: number): Promise<boolean> {
    await this.stopTaking();
    return withTimeout(Promise.all(this.running).then(() => true), graceMs, false);
  }

  // Answers `answer(job)` to every job still in the lane (after a drain: sent before
  // their gateway saw the session move); how many.
  async answerWaiting(answer: (job: ExecutionLaneJob) => { ok: false; error: JobError }): Promise<number> {
    let answered = 0;
    for (;;) {
      const payload = await this.redis.lmove(this.lane, this.activeKey, 'RIGHT', 'LEFT');
      if (payload === null) return answered;
      const job = parse(payload);
      if (job) {
        const outcome = answer(job);
        await this.finish(payload, job, outcome, { jobId: job.jobId, ok: false, error: outcome.error });
      } else await this.redis.lrem(this.activeKey, 1, payload);
      answered++;
    }
  }

  // The executions on this worker's lane: waiting in it, or taken (running, or waiting
  // for their session's turn).
  async executionIds(): Promise<string[]> {
    const [waiting, taken] = await Promise.all([this.redis.lrange(this.lane, 0, -1), this.redis.lrange(this.activeKey, 0, -1)]);
    return [...waiting, ...taken].flatMap((payload) => parse(payload)?.executionId ?? []);
  }

  async close(): Promise<void> {
    await this.stopTaking();
  }

  private async stopTaking(): Promise<void> {
    if (!this.taking) return;
    this.taking = false;
    this.resume();
    this.wake?.();
    // The take in flight returns within TAKE_BLOCK_S, and a job it brings in goes back to
    // the lane (takeLoop). Should Redis be unreachable, the connection is dropped after
    // a grace: a job a dropped take moved stays in `active`, answered `lost` by the
    // worker's next start.
    await withTimeout(this.loop ?? Promise.resolve(), TAKE_BLOCK_S * 1000 + STOP_GRACE_MS, undefined);
    this.taker?.disconnect();
    await this.loop?.catch((error: Error) => this.logger.warn(`taking from ${this.lane} ended: ${error.message}`));
    this.taker = null;
  }

  private async takeLoop(): Promise<void> {
    while (this.taking) {
      if (this.resumed) {
        await this.resumed;
        continue;
      }
      if (this.running.size >= this.concurrency) {
        await new Promise<void>((resolve) => (this.wake = resolve));
        this.wake = null;
        continue;
      }
      let payload: string | null;
      try {
        payload = await this.taker!.blmove(this.lane, this.activeKey, 'RIGHT', 'LEFT', TAKE_BLOCK_S);
      } catch (error) {
        if (!this.taking) return;
        this.logger.warn(`taking from ${this.lane}: ${(error as Error).message}`);
        await new Promise((resolve) => setTimeout(resolve, RETRY_AFTER_ERROR_MS));
        continue;
      }
      if (payload === null) continue;
      if (this.resumed) await this.resumed;
      if (!this.taking) {
        // Taken as the drain began: back to the lane's oldest end, for answerWaiting.
        await this.redis.multi().lrem(this.activeKey, 1, payload).rpush(this.lane, payload).exec();
        return;
      }
      this.run(payload);
    }
  }

  private run(payload: string): void {
    const job = parse(payload);
    const task = (async () => {
      if (!job) {
        this.logger.error(`dropping a malformed job from ${this.lane}`);
        await this.redis.lrem(this.activeKey, 1, payload);
        return;
      }
      const reply = await this.handle(job);
      await this.finish(payload, job, reply.ok ? { ok: true } : { ok: false, error: reply.error }, reply, true);
    })()
      .catch((error: Error) => this.logger.error(`execution job from ${this.lane}: ${error.message}`))
      .finally(() => {
        this.running.delete(task);
        this.wake?.();
      });
    this.running.add(task);
  }

  // One MULTI: the outcome (for a gateway that missed the reply), the reply, the job off
  // `active`, and, for a job handled here, the tenant's execution slot freed (a job
  // answered without running keeps it: its gateway sends it elsewhere, or frees it).
  private async finish(payload: string, job: ExecutionLaneJob, outcome: ExecutionOutcome, reply: JobReply | null, freeSlot = false): Promise<void> {
    const multi = this.redis.multi().set(executionOutcomeKey(job.dispatchId), JSON.stringify(outcome), 'EX', EXECUTION_OUTCOME_TTL_S);
    if (freeSlot && job.slot) multi.zrem(job.slot.key, job.slot.id);
    if (reply && job.replyTo) multi.publish(job.replyTo, JSON.stringify(reply));
    await multi.lrem(this.activeKey, 1, payload).exec();
  }
}

function parse(payload: string): ExecutionLaneJob | null {
  try {
    const job = JSON.parse(payload) as ExecutionLaneJob;
    return typeof job?.dispatchId === 'string' && typeof job.jobId === 'string' ? job : null;
  } catch {
    return null;
  }
}
