import type { MigrationInterface, QueryRunner } from 'typeorm';

// The number of live files of each thread, beside its revision (both moved by every
// write and delete, under the tenant's storage lock): the per-thread file limit
// (tenant limit `maxFilesPerThread`, issue 57) is checked by every write without
// counting a large thread's rows. Threads that already have files are counted once here.
export class ThreadFileCounts1765100000000 implements MigrationInterface {
  name = 'ThreadFileCounts1765100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE thread_revisions ADD COLUMN files integer NOT NULL DEFAULT 0 CHECK (files >= 0)`);
    await q.query(`
      UPDATE thread_revisions r SET files = c.files
        FROM (SELECT tenant_id, thread_id, count(*)::int AS files FROM thread_files
               WHERE NOT deleted GROUP BY tenant_id, thread_id) c
       WHERE r.tenant_id = c.tenant_id AND r.thread_id = c.thread_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE thread_revisions DROP COLUMN files`);
  }
}
