import { DrydockError } from './errors.js';
import { unwrap, unwrapStream, type Transport } from './http.js';
import { everyItem } from './pages.js';
import { ndjson, serverSentEvents } from './streams.js';
import type { Batch, BatchCounts, BatchItem, BatchItemInput, BatchOptions, BatchPage } from './types.js';

export interface WaitOptions {
  // Called with the batch (its counts) as they change, at most every 250 ms.
  onProgress?: (batch: Batch) => void;
  // Called as each item ends.
  onItem?: (item: { index: number; id: string | null; status: string }) => void;
  signal?: AbortSignal;
}

// The final statuses: `cancelling` is not one (items it had started still run).
const FINISHED: readonly string[] = ['completed', 'cancelled'];

// One batch: thousands of independent runs, each in a clean sandbox.
export class BatchRun {
  constructor(
    private readonly http: Transport,
    public info: { id: string; status: string; total: number },
  ) {}

  get id(): string {
    return this.info.id;
  }

  async refresh(): Promise<Batch> {
    const batch = await unwrap(this.http.api.GET('/v1/batches/{id}', { params: { path: { id: this.id } } }));
    this.info = batch;
    return batch;
  }

  // Follows the batch's event stream until it is done, and resolves to its final state.
  async wait(options: WaitOptions = {}): Promise<Batch> {
    for (;;) {
      // `done` carries the final state; a stream that ended without it (a gateway
      // restart, a proxy timeout) is followed again.
      const batch = (await this.follow(options)) ?? (await this.refresh());
      if (FINISHED.includes(batch.status)) {
        this.info = batch;
        return batch;
      }
      await new Promise((resolve) => setTimeout(resolve, 500));
    }
  }

  // One connection to the event stream: the batch of its `done` event, or null when the
  // stream ended before it.
  private async follow(options: WaitOptions): Promise<Batch | null> {
    const stream = await unwrapStream(this.http.api.GET('/v1/batches/{id}/events', { params: { path: { id: this.id } }, parseAs: 'stream', signal: options.signal }));
    for await (const { event, data } of serverSentEvents(stream)) {
      const payload = JSON.parse(data) as Record<string, unknown>;
      if (event === 'progress') options.onProgress?.(payload as unknown as Batch);
      else if (event === 'item') options.onItem?.(payload as { index: number; id: string | null; status: string });
      else if (event === 'error' && typeof payload.code === 'string') throw new DrydockError(payload.code, String(payload.message), 0);
      else if (event === 'done') return payload as unknown as Batch;
    }
    return null;
  }

  // Every finished item, in index order, streamed (a 100,000-item batch is never held
  // in memory).
  async *results(options: { signal?: AbortSignal } = {}): AsyncGenerator<BatchItem> {
    yield* ndjson<BatchItem>(await unwrapStream(this.http.api.GET('/v1/batches/{id}/results', { params: { path: { id: this.id } }, parseAs: 'stream', signal: options.signal })));
  }

  // One page of items, optionally of one status.
  async items(options: { status?: string; offset?: number; limit?: number } = {}): Promise<BatchItem[]> {
    const body = await unwrap(this.http.api.GET('/v1/batches/{id}/items', { params: { path: { id: this.id }, query: options as never } }));
    return body.items;
  }

  // Queued items become cancelled; running ones finish, or are killed with `kill`.
  async cancel(options: { kill?: boolean } = {}): Promise<Batch> {
    const batch = await unwrap(this.http.api.POST('/v1/batches/{id}/cancel', { params: { path: { id: this.id } }, body: options }));
    this.info = batch;
    return batch;
  }
}

export type BatchSource = Iterable<BatchItemInput> | AsyncIterable<BatchItemInput>;

export interface SubmitOptions extends BatchOptions, WaitOptions {}

export class Batches {
  constructor(private readonly http: Transport) {}

  // Submits items (an array, or any iterable / async iterable, sent as NDJSON). With
  // onProgress or onItem, resolves once the batch is done; otherwise once it is queued.
  async submit(items: BatchSource, options: SubmitOptions = {}): Promise<BatchRun> {
    const { onProgress, onItem, signal, ...batchOptions } = options;
    const lines: string[] = [JSON.stringify(batchOptions)];
    for await (const item of items as AsyncIterable<BatchItemInput>) lines.push(JSON.stringify(item));
    // An idempotency key makes resubmitting safe, so the request may be retried then.
    const submitted = await unwrap(
      this.http.api.POST('/v1/batches', {
        body: (lines.join('\n') + '\n') as never,
        bodySerializer: (body: unknown) => body as string,
        headers: { 'content-type': 'application/x-ndjson' },
        signal,
        ...(batchOptions.idempotencyKey ? { fetch: this.http.safeFetch } : {}),
      }),
    );
    const batch = new BatchRun(this.http, submitted as { id: string; status: string; total: number });
    if (onProgress || onItem) await batch.wait({ onProgress, onItem, signal });
    return batch;
  }

  async get(id: string): Promise<BatchRun> {
    return new BatchRun(this.http, await unwrap(this.http.api.GET('/v1/batches/{id}', { params: { path: { id } } })));
  }

  // One page of the tenant's batches, newest first: `limit` of them (default 50, at most
  // 500) from after `before`; pass `next` as `before` for the following page (null on
  // the last). `all()` walks every page.
  async list(options: { limit?: number; before?: string; signal?: AbortSignal } = {}): Promise<BatchPage> {
    const { signal, ...query } = options;
    return unwrap(this.http.api.GET('/v1/batches', { params: { query }, signal }));
  }

  // Every batch of the tenant, newest first, across pages (`pageSize` per request,
  // default 50), asked page by page as the loop goes.
  all(options: { pageSize?: number; signal?: AbortSignal } = {}): AsyncGenerator<Batch> {
    const { pageSize, signal } = options;
    return everyItem(async (before) => {
      const page = await this.list({ ...(pageSize ? { limit: pageSize } : {}), ...(before ? { before } : {}), signal });
      return { items: page.batches, next: page.next };
    });
  }
}

export const finished = (counts: BatchCounts): number => counts.ok + counts.error + counts.timeout + counts.memory + counts.killed + counts.cancelled;
