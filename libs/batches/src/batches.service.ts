import { TemplatesService } from '@drydock/templates';
import { Inject, Injectable } from '@nestjs/common';
import type { Readable } from 'node:stream';
import type { Redis } from 'ioredis';
import { APP_CONFIG, newId, REDIS, type AppConfig, type TenantPrincipal } from '@drydock/core';
import { policyWithin } from '@drydock/egress';
import { resolveLimits } from '@drydock/sessions';
import { BatchAdmission } from './batch-admission.js';
import { readJsonBatch, readNdjsonBatch, type BatchBody, type BodyRules } from './batch-body.js';
import { BATCH_KILL_CHANNEL, batchEventsChannel, type BatchEvent, type BatchKillMessage } from './batch-events.js';
import { toBatchItemView, toBatchView, type BatchItemView, type BatchView } from './batch.view.js';
import { BATCHES_REPOSITORY, type BatchesRepository, type ItemStatusFilter } from './batches.repository.js';
import { BatchesError } from './batches.errors.js';

const RESULTS_PAGE = 500;

export interface SubmittedBatch {
  id: string;
  status: BatchView['status'];
  total: number;
}

// How the options' `network` is read before it is checked against the tenant's ceiling:
// null for none, {allow} for a policy, a typed error for any other shape (the gateway's
// networkOption: 403 NETWORK_FORBIDDEN for `true`, 400 INVALID_NETWORK_POLICY).
export type NetworkOptionReader = (value: unknown) => { allow: readonly unknown[] } | null;

// The gateway's side of batches: submit (JSON or NDJSON), read, list, stream results,
// cancel. Workers run the items (@drydock/session-host); admission decides when.
@Injectable()
export class BatchesService {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(BATCHES_REPOSITORY) private readonly batches: BatchesRepository,
    @Inject(REDIS) private readonly redis: Redis,
    private readonly admission: BatchAdmission,
    private readonly templates: TemplatesService,
  ) {}

  private get rules(): BodyRules {
    const { maxItems, maxBodyBytes, maxCodeBytes, maxItemFiles, maxItemFileBytes } = this.config.batches;
    return { maxItems, maxBodyBytes, maxCodeBytes, maxItemFiles, maxItemFileBytes };
  }

  submitJson(
    principal: Pick<TenantPrincipal, 'tenantId' | 'limits'>,
    body: unknown,
    readNetwork: NetworkOptionReader,
  ): Promise<{ batch: SubmittedBatch; created: boolean }> {
    return this.submit(principal, readJsonBatch(body, this.rules), readNetwork);
  }

  async submitNdjson(
    principal: Pick<TenantPrincipal, 'tenantId' | 'limits'>,
    stream: Readable,
    readNetwork: NetworkOptionReader,
  ): Promise<{ batch: SubmittedBatch; created: boolean }> {
    return this.submit(principal, await readNdjsonBatch(stream, this.rules), readNetwork);
  }

  private async submit(
    principal: Pick<TenantPrincipal, 'tenantId' | 'limits'>,
    body: BatchBody,
    readNetwork: NetworkOptionReader,
  ): Promise<{ batch: SubmittedBatch; created: boolean }> {
    const { tenantId } = principal;
    const { options } = body;
    // Fixed at submission, like the template: every item runs with the same policy (the
    // proxy still narrows it to the tenant's ceiling as it is at each connection).
    const requested = readNetwork(options.network);
    const network = requested ? policyWithin(principal.limits.network, requested) : null;
    // Every item runs with a session's limits, clamped to the tenant's maxima.
    const limits = resolveLimits(this.config, principal.limits, options.limits);
    const timeoutMs = Math.min(options.timeoutMs ?? limits.timeoutMs, limits.timeoutMs);
    const tenantConcurrency = principal.limits.batchConcurrency ?? this.config.batches.tenantConcurrency;
    const concurrency = Math.min(options.concurrency ?? this.config.batches.defaultConcurrency, tenantConcurrency);
    // Resolved once: every item of the batch runs the same version, whatever is built later.
    const template = options.template === undefined ? null : await this.templates.resolve(tenantId, options.template);
    const { record, created } = await this.batches.create(
      tenantId,
      {
        id: newId('bat'),
        limits: { ...limits, timeoutMs },
        timeoutMs,
        concurrency,
        idempotencyKey: options.idempotencyKey ?? null,
        metadata: options.metadata ?? null,
        template: template?.ref ?? null,
        image: template?.imageRef ?? null,
        network,
      },
      body.items,
    );
    if (created) await this.admission.admit(tenantId);
    return { batch: { id: record.id, status: record.status, total: record.total }, created };
  }

  async get(tenantId: string, batchId: string): Promise<BatchView> {
    const record = await this.batches.findById(tenantId, batchId);
    if (!record) throw BatchesError.notFound(batchId);
    return toBatchView(record);
  }

  async list(tenantId: string, page: { limit: number; before?: string }): Promise<{ batches: BatchView[]; next: string | null }> {
    const records = await this.batches.list(tenantId, { limit: page.limit + 1, before: page.before });
    const more = records.length > page.limit;
    const shown = records.slice(0, page.limit);
    return { batches: shown.map(toBatchView), next: more ? shown[shown.length - 1]!.id : null };
  }

  async items(
    tenantId: string,
    batchId: string,
    filter: { status?: ItemStatusFilter; offset: number; limit: number },
  ): Promise<{ items: BatchItemView[] }> {
    await this.get(tenantId, batchId);
    const items = await this.batches.listItems(tenantId, batchId, filter);
    return { items: items.map(toBatchItemView) };
  }

  // Every finished item, in index order, one JSON line each: read page by page, so a
  // 100,000-item batch is never held whole. Items that finish while this runs are
  // included if their index is still ahead.
  async *results(tenantId: string, batchId: string): AsyncGenerator<string> {
    await this.get(tenantId, batchId);
    let after = -1;
    for (;;) {
      const page = await this.batches.finishedItemsAfter(tenantId, batchId, after, RESULTS_PAGE);
      for (const item of page) yield `${JSON.stringify(toBatchItemView(item))}\n`;
      if (page.length < RESULTS_PAGE) return;
      after = page[page.length - 1]!.index;
    }
  }

  // Queued items are cancelled at once; running ones finish, or with `kill` are stopped
  // by their workers (they end `killed`).
  async cancel(tenantId: string, batchId: string, options: { kill?: boolean } = {}): Promise<BatchView> {
    const record = await this.batches.cancel(tenantId, batchId, this.config.batches.retentionSeconds);
    if (!record) throw BatchesError.notFound(batchId);
    const changed: BatchEvent = { type: 'changed' };
    await this.redis.publish(batchEventsChannel(batchId), JSON.stringify(changed)).catch(() => undefined);
    if (options.kill && record.counts.running > 0) {
      const message: BatchKillMessage = { batchId, tenantId };
      await this.redis.publish(BATCH_KILL_CHANNEL, JSON.stringify(message));
    }
    return toBatchView(record);
  }
}
