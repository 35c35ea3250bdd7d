import type { MigrationInterface, QueryRunner } from 'typeorm';

const STATUSES_BEFORE = `'queued', 'running', 'completed', 'cancelled'`;
const STATUSES = `'queued', 'running', 'completed', 'cancelling', 'cancelled'`;

// A batch cancelled while items of it still run is `cancelling` until they end, so that
// `cancelled` is final like `completed` (a client that stops at it misses nothing).
// Batches cancelled before this with items still running become `cancelling` too.
export class BatchCancelling1765000000000 implements MigrationInterface {
  name = 'BatchCancelling1765000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE batches DROP CONSTRAINT batches_status_check`);
    await q.query(`ALTER TABLE batches ADD CONSTRAINT batches_status_check CHECK (status IN (${STATUSES}))`);
    await q.query(`UPDATE batches SET status = 'cancelling' WHERE status = 'cancelled' AND n_running > 0`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`UPDATE batches SET status = 'cancelled' WHERE status = 'cancelling'`);
    await q.query(`ALTER TABLE batches DROP CONSTRAINT batches_status_check`);
    await q.query(`ALTER TABLE batches ADD CONSTRAINT batches_status_check CHECK (status IN (${STATUSES_BEFORE}))`);
  }
}
