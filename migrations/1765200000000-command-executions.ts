import type { MigrationInterface, QueryRunner } from 'typeorm';

// Shell commands (POST /v1/sessions/:id/commands, issue 51) are recorded as executions
// of kind `command`: the same row, listing, usage and idempotency as Python runs, with
// the command's exit code and the signal that ended it. Existing rows are Python runs.
export class CommandExecutions1765200000000 implements MigrationInterface {
  name = 'CommandExecutions1765200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE executions ADD COLUMN kind text NOT NULL DEFAULT 'code' CHECK (kind IN ('code', 'command'))`);
    await q.query(`ALTER TABLE executions ADD COLUMN exit_code integer`);
    await q.query(`ALTER TABLE executions ADD COLUMN signal text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE executions DROP COLUMN signal`);
    await q.query(`ALTER TABLE executions DROP COLUMN exit_code`);
    await q.query(`ALTER TABLE executions DROP COLUMN kind`);
  }
}
