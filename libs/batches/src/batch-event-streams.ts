import { Inject, Injectable, type OnApplicationShutdown } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { APP_CONFIG, createRedis, type AppConfig } from '@drydock/core';
import { batchEventsChannel, type BatchEvent } from './batch-events.js';
import { FINAL_BATCH_STATUSES } from './batch.types.js';
import { toBatchView, type BatchView } from './batch.view.js';
import { BATCHES_REPOSITORY, type BatchesRepository } from './batches.repository.js';
import { BatchesError } from './batches.errors.js';

// At most one `progress` event per this period, whatever the rate of items.
export const PROGRESS_PERIOD_MS = 250;
// The counts are read again at least this often, in case a message was lost.
const POLL_MS = 1000;

export type BatchStreamEvent =
  | { event: 'progress'; data: BatchView }
  | { event: 'item'; data: { index: number; id: string | null; status: string } }
  | { event: 'done'; data: BatchView };

// GET /v1/batches/:id/events: the batch's progress (its counts), each item as it ends,
// and `done` when nothing is queued or running any more. Workers publish on the batch's
// channel; this gateway holds one subscriber connection for all its streams.
@Injectable()
export class BatchEventStreams implements OnApplicationShutdown {
  private subscriber: Redis | null = null;
  private readonly listeners = new Map<string, Set<(event: BatchEvent) => void>>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(BATCHES_REPOSITORY) private readonly batches: BatchesRepository,
  ) {}

  async *follow(tenantId: string, batchId: string, signal: AbortSignal): AsyncGenerator<BatchStreamEvent> {
    const pending: BatchEvent[] = [];
    let wake: (() => void) | null = null;
    const notify = () => {
      wake?.();
      wake = null;
    };
    // Subscribed before the first read: an item that ends in between is then in its
    // counts or an `item` event (or both), never in neither.
    const unsubscribe = await this.listen(batchId, (event) => {
      pending.push(event);
      notify();
    });
    const onAbort = () => notify();
    signal.addEventListener('abort', onAbort);
    try {
      const first = await this.batches.findById(tenantId, batchId);
      if (!first) throw BatchesError.notFound(batchId);
      let view = toBatchView(first);
      yield { event: 'progress', data: view };
      let lastProgress = Date.now();
      let lastRead = Date.now();
      let dirty = false;
      while (!signal.aborted && !isDone(view)) {
        const now = Date.now();
        const due = dirty ? lastProgress + PROGRESS_PERIOD_MS : lastRead + POLL_MS;
        if (pending.length === 0 && now < due) {
          await new Promise<void>((resolve) => {
            wake = resolve;
            setTimeout(resolve, due - now);
          });
        }
        for (const event of pending.splice(0)) {
          if (event.type === 'item') yield { event: 'item', data: { index: event.index, id: event.id, status: event.status } };
          dirty = true;
        }
        if (Date.now() >= (dirty ? lastProgress + PROGRESS_PERIOD_MS : lastRead + POLL_MS)) {
          const record = await this.batches.findById(tenantId, batchId);
          if (!record) return;
          lastRead = Date.now();
          const next = toBatchView(record);
          if (dirty || JSON.stringify(next.counts) !== JSON.stringify(view.counts) || next.status !== view.status) {
            view = next;
            if (!isDone(view)) {
              yield { event: 'progress', data: view };
              lastProgress = Date.now();
            }
          }
          dirty = false;
        }
      }
      if (!signal.aborted) {
        yield { event: 'progress', data: view };
        yield { event: 'done', data: view };
      }
    } finally {
      signal.removeEventListener('abort', onAbort);
      await unsubscribe();
    }
  }

  private async listen(batchId: string, onEvent: (event: BatchEvent) => void): Promise<() => Promise<void>> {
    const subscriber = this.ensureSubscriber();
    const channel = batchEventsChannel(batchId);
    let set = this.listeners.get(channel);
    if (!set) {
      set = new Set();
      this.listeners.set(channel, set);
      await subscriber.subscribe(channel);
    }
    set.add(onEvent);
    return async () => {
      set.delete(onEvent);
      if (set.size === 0 && this.listeners.get(channel) === set) {
        this.listeners.delete(channel);
        await subscriber.unsubscribe(channel).catch(() => undefined);
      }
    };
  }

  private ensureSubscriber(): Redis {
    if (!this.subscriber) {
      this.subscriber = createRedis(this.config.redisUrl, 'drydock-batch-events');
      this.subscriber.on('message', (channel: string, message: string) => {
        const set = this.listeners.get(channel);
        if (!set) return;
        let event: BatchEvent;
        try {
          event = JSON.parse(message) as BatchEvent;
        } catch {
          return;
        }
        for (const listener of set) listener(event);
      });
    }
    return this.subscriber;
  }

  async onApplicationShutdown(): Promise<void> {
    await this.subscriber?.quit().catch(() => undefined);
    this.subscriber = null;
  }
}

function isDone(view: BatchView): boolean {
  return FINAL_BATCH_STATUSES.includes(view.status) && view.counts.running === 0 && view.counts.queued === 0;
}
