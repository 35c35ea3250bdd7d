import type { MigrationInterface, QueryRunner } from 'typeorm';

// Background processes (issue 51): a command started with `background: true` is an
// execution row like any command, `running` with the pid it got until it ends. The
// session's processes are listed from these rows (a partial index keeps that cheap).
export class BackgroundProcesses1765300000000 implements MigrationInterface {
  name = 'BackgroundProcesses1765300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE executions ADD COLUMN background boolean NOT NULL DEFAULT false`);
    await q.query(`ALTER TABLE executions ADD COLUMN pid integer`);
    await q.query(`CREATE INDEX executions_background_idx ON executions (tenant_id, session_id, created_at) WHERE background`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX executions_background_idx`);
    await q.query(`ALTER TABLE executions DROP COLUMN pid`);
    await q.query(`ALTER TABLE executions DROP COLUMN background`);
  }
}
