import type { MigrationInterface, QueryRunner } from 'typeorm';

// A session's own idle action (docs/sessions.md; agent definitions set it for their
// threads' sessions), and why a run was told its state was lost when the platform knows
// (a checkpoint that could not be restored).
export class SessionIdleAction1765650000000 implements MigrationInterface {
  name = 'SessionIdleAction1765650000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions ADD COLUMN idle_action text CHECK (idle_action IN ('hibernate', 'end'))`);
    await q.query(`ALTER TABLE executions ADD COLUMN state_lost_reason text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE executions DROP COLUMN state_lost_reason`);
    await q.query(`ALTER TABLE sessions DROP COLUMN idle_action`);
  }
}
