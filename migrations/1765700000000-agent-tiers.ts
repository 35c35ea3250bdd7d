import type { MigrationInterface, QueryRunner } from 'typeorm';

// The isolation tier an agent definition's sessions run on (docs/agent.md); null: the
// tenant's default tier, as for a session created without one.
export class AgentTiers1765700000000 implements MigrationInterface {
  name = 'AgentTiers1765700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agents ADD COLUMN tier text CHECK (tier IN ('runc', 'gvisor'))`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agents DROP COLUMN tier`);
  }
}
