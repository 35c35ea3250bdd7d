import { Logger } from '@nestjs/common';
import type { EgressConnectionRecord, EgressSink } from '../proxy/egress-types.js';
import type { EgressLogRepository } from './egress-log.repository.js';

const FLUSH_MS = 250;
const BATCH = 500;
// Rows kept while the database is unreachable; past it the oldest are dropped (and said).
const MAX_PENDING = 50_000;

// Writes the proxy's connection records in batches, off the connection's path: a
// connection never waits for its log row, and a database outage delays rows instead of
// losing them (up to MAX_PENDING).
export class EgressRecorder implements EgressSink {
  private readonly logger = new Logger(EgressRecorder.name);
  private pending: EgressConnectionRecord[] = [];
  private timer: NodeJS.Timeout | null = null;
  private flushing: Promise<void> | null = null;
  private dropped = 0;

  constructor(
    private readonly log: EgressLogRepository,
    private readonly observe: (record: EgressConnectionRecord) => void = () => undefined,
  ) {}

  record(connection: EgressConnectionRecord): void {
    this.observe(connection);
    this.pending.push(connection);
    if (this.pending.length > MAX_PENDING) {
      this.dropped += this.pending.length - MAX_PENDING;
      this.pending.splice(0, this.pending.length - MAX_PENDING);
    }
    this.timer ??= setTimeout(() => void this.flush(), FLUSH_MS);
  }

  // Writes what is pending now (and waits for a write in progress).
  async flush(): Promise<void> {
    if (this.timer) clearTimeout(this.timer);
    this.timer = null;
    while (this.flushing) await this.flushing;
    this.flushing = this.write().finally(() => (this.flushing = null));
    await this.flushing;
  }

  private async write(): Promise<void> {
    while (this.pending.length) {
      const batch = this.pending.slice(0, BATCH);
      try {
        await this.log.append(batch);
      } catch (error) {
        this.logger.warn(`egress log: ${this.pending.length} rows wait for the database (${(error as Error).message})`);
        this.timer ??= setTimeout(() => void this.flush(), 5_000);
        return;
      }
      this.pending.splice(0, batch.length);
    }
    if (this.dropped) {
      this.logger.error(`egress log: ${this.dropped} rows were dropped while the database was unreachable`);
      this.dropped = 0;
    }
  }
}
