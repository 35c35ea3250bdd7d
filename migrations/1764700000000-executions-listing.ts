import type { MigrationInterface, QueryRunner } from 'typeorm';

// GET /admin/executions pages every tenant's executions newest first, or one tenant's;
// usage sums them per tenant and day. Both read these indexes.
export class ExecutionsListing1764700000000 implements MigrationInterface {
  name = 'ExecutionsListing1764700000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`CREATE INDEX executions_created_idx ON executions (created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX executions_tenant_created_idx ON executions (tenant_id, created_at DESC, id DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX executions_tenant_created_idx`);
    await q.query(`DROP INDEX executions_created_idx`);
  }
}
