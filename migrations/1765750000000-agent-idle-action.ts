import type { MigrationInterface, QueryRunner } from 'typeorm';

// What an agent definition's threads' sessions come to when idle (docs/agent.md); null:
// the deployment's SESSION_IDLE_ACTION, as for a session created without one.
export class AgentIdleAction1765750000000 implements MigrationInterface {
  name = 'AgentIdleAction1765750000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agents ADD COLUMN idle_action text CHECK (idle_action IN ('hibernate', 'end'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agents DROP COLUMN idle_action`);
  }
}
