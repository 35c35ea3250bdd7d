import type { MigrationInterface, QueryRunner } from 'typeorm';

// Per-tenant artifact quotas: one usage row per tenant (live artifact count and bytes),
// kept in step with `artifacts` in the transactions that insert and delete them. Its
// row lock serialises a tenant's ingests, so two workers cannot both pass the check
// for the last slot. Rows are back-filled from artifacts already stored.
export class ArtifactQuotas1764100000000 implements MigrationInterface {
  name = 'ArtifactQuotas1764100000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE artifact_usage (
        tenant_id text PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
        count bigint NOT NULL DEFAULT 0 CHECK (count >= 0),
        bytes bigint NOT NULL DEFAULT 0 CHECK (bytes >= 0)
      )`);
    await q.query(`
      INSERT INTO artifact_usage (tenant_id, count, bytes)
      SELECT tenant_id, count(*), coalesce(sum(size), 0) FROM artifacts GROUP BY tenant_id`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE artifact_usage');
  }
}
