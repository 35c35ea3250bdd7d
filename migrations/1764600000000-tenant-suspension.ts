import type { MigrationInterface, QueryRunner } from 'typeorm';

// A tenant an operator suspended: its API keys answer 403 TENANT_SUSPENDED, its sessions
// are ended and no batch item of it is admitted until it is resumed.
export class TenantSuspension1764600000000 implements MigrationInterface {
  name = 'TenantSuspension1764600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tenants ADD COLUMN suspended_at timestamptz`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE tenants DROP COLUMN suspended_at`);
  }
}
