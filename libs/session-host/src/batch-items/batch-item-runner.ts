import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import type { Sandbox } from '@drydock/execution';
import { BatchItemLedger, failedItem, itemOutcomeOf, type BatchItemRef, type ItemOutcome, type StartedItem } from '@drydock/batches';
import { ArtifactIngester } from '../artifacts/artifact-ingester.js';
import { BatchSandboxPool, type Lease } from './batch-sandbox-pool.js';
import { PlatformMetrics } from '@drydock/metrics';

interface RunningItem {
  ref: BatchItemRef;
  sandbox: Sandbox | null;
  // The batch was cancelled with `kill`: the outcome is `killed` (Cancelled).
  killed: boolean;
}

// Runs one batch item on this worker in a sandbox no other item can reach: one with the
// batch's limits, new or recycled after an item of the same batch (BatchSandboxPool),
// the item's files put in /session, its code run once, what it left in
// /session/artifacts ingested with the batch and item as lineage.
@Injectable()
export class BatchItemRunner {
  private readonly logger = new Logger(BatchItemRunner.name);
  private readonly running = new Map<string, RunningItem>();
  // Set when this worker gives its running items up (a drain past its timeout): they
  // are left unrecorded, so BullMQ hands them to another worker.
  private abandoning = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly pool: BatchSandboxPool,
    private readonly ledger: BatchItemLedger,
    private readonly ingester: ArtifactIngester,
    private readonly metrics: PlatformMetrics,
  ) {}

  get size(): number {
    return this.running.size;
  }

  // Runs the item unless it is no longer to run (finished, cancelled, out of attempts:
  // then its record says why). Returns whether this run's outcome became its record.
  async run(ref: BatchItemRef): Promise<boolean> {
    const item = await this.ledger.start(ref);
    if (!item) return this.settle(ref);
    const key = keyOf(ref);
    const entry: RunningItem = { ref, sandbox: null, killed: false };
    this.running.set(key, entry);
    let outcome: ItemOutcome;
    try {
      outcome = await this.execute(item, entry);
    } finally {
      this.running.delete(key);
    }
    if (this.abandoning) throw new Error(`item ${key} given up by a draining worker; it runs again elsewhere`);
    const recorded = await this.ledger.finish(ref, item.clientId, outcome);
    if (recorded) this.metrics.batchItems.inc({ tenant: ref.tenantId, status: outcome.status });
    return recorded;
  }

  // Stops every running item without recording it: another worker runs it again (its
  // job's lock lapses). For a drain that ran out of time.
  abandonAll(): number {
    this.abandoning = true;
    for (const entry of this.running.values()) void entry.sandbox?.destroy().catch(() => undefined);
    return this.running.size;
  }

  // The idle sandboxes kept for the next items (a drain, a shutdown).
  releaseIdle(): Promise<void> {
    return this.pool.destroyAll();
  }

  // Stops this worker's running items of a cancelled batch; they end `killed`.
  kill(batchId: string): number {
    let killed = 0;
    for (const entry of this.running.values()) {
      if (entry.ref.batchId !== batchId || entry.killed) continue;
      entry.killed = true;
      killed++;
      void entry.sandbox?.destroy().catch(() => undefined);
    }
    return killed;
  }

  private async execute(item: StartedItem, entry: RunningItem): Promise<ItemOutcome> {
    const { ref } = item;
    let lease: Lease;
    try {
      lease = await this.pool.acquire(item);
    } catch (error) {
      return failedItem('SandboxUnavailable', `The sandbox could not be started: ${(error as Error).message}`);
    }
    const { sandbox } = lease;
    entry.sandbox = sandbox;
    let reusable = false;
    try {
      if (entry.killed) return cancelled();
      const files = Object.entries(item.files ?? {});
      if (files.length > 0) {
        const now = new Date();
        const { refused } = await sandbox.putFiles(files.map(([path, text]) => ({ path, content: Buffer.from(text, 'utf8'), modifiedAt: now })));
        // A fresh sandbox refuses only paths that clash with each other ("/a" and "/a/b").
        if (refused.length > 0) {
          reusable = sandbox.alive && !this.abandoning;
          const list = refused.map(({ path, reason }) => `${path} (${reason})`).join(', ');
          return failedItem('InvalidFiles', `These files could not be put in /session: ${list}`);
        }
      }
      const outcome = await sandbox.run({
        id: `${ref.batchId}-${ref.index}-${item.attempt}`,
        code: item.code,
        timeoutMs: item.timeoutMs,
        maxOutputBytes: item.limits.maxOutputBytes,
      });
      if (entry.killed) return cancelled();
      const produced = sandbox.alive
        ? await this.ingester.ingest(sandbox, ref.tenantId, { batchId: ref.batchId, batchItem: ref.index }, outcome.artifacts)
        : { artifacts: [], skipped: [] };
      reusable = sandbox.alive && !this.abandoning;
      return itemOutcomeOf(outcome, produced.artifacts);
    } catch (error) {
      if (entry.killed) return cancelled();
      this.logger.warn(`item ${ref.batchId}[${ref.index}] failed in its sandbox: ${(error as Error).message}`);
      return failedItem('SandboxError', `The sandbox failed while running the item: ${(error as Error).message}`);
    } finally {
      this.pool.release(ref.batchId, lease, reusable && !entry.killed);
    }
  }

  // start() found nothing to run: finished or cancelled items need nothing; a running
  // one that will not run again (runs used up, batch cancelled) ends killed.
  private async settle(ref: BatchItemRef): Promise<boolean> {
    const state = await this.ledger.runState(ref);
    if (state?.status !== 'running') return false;
    if (state.batchStatus === 'cancelling' || state.batchStatus === 'cancelled') return this.ledger.abandon(ref, 'cancelled', state.attempts);
    if (state.attempts >= this.config.batches.maxAttempts) return this.ledger.abandon(ref, 'attempts', state.attempts);
    return false;
  }
}

function keyOf(ref: BatchItemRef): string {
  return `${ref.batchId}:${ref.index}`;
}

function cancelled(): ItemOutcome {
  return failedItem('Cancelled', 'The batch was cancelled with kill while this item ran.');
}
