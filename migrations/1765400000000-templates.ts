import type { MigrationInterface, QueryRunner } from 'typeorm';

// Templates (issue 52): sandbox images built from a tenant's or an operator's
// Dockerfile. A template's name is unique among the live templates of its tenant (or
// among the shared ones, tenant_id null); each build is a numbered version. Sessions
// and batches keep the template version they started from and its image.
export class Templates1765400000000 implements MigrationInterface {
  name = 'Templates1765400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE templates (
        id text PRIMARY KEY,
        tenant_id text REFERENCES tenants(id) ON DELETE CASCADE,
        name text NOT NULL,
        description text,
        pool_size integer NOT NULL DEFAULT 0,
        created_at timestamptz NOT NULL DEFAULT now(),
        deleted_at timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX templates_live_name_idx ON templates (coalesce(tenant_id, ''), name) WHERE deleted_at IS NULL`);
    await q.query(`CREATE INDEX templates_tenant_name_idx ON templates (tenant_id, name)`);
    await q.query(`
      CREATE TABLE template_versions (
        template_id text NOT NULL REFERENCES templates(id) ON DELETE CASCADE,
        version integer NOT NULL,
        status text NOT NULL,
        dockerfile text NOT NULL,
        files jsonb NOT NULL DEFAULT '{}',
        image_ref text,
        image_digest text,
        size_bytes bigint,
        error text,
        log text,
        built_by text,
        created_at timestamptz NOT NULL DEFAULT now(),
        finished_at timestamptz,
        purged_at timestamptz,
        PRIMARY KEY (template_id, version)
      )`);
    await q.query(`ALTER TABLE sessions ADD COLUMN template text`);
    await q.query(`ALTER TABLE sessions ADD COLUMN image text`);
    await q.query(`ALTER TABLE batches ADD COLUMN template text`);
    await q.query(`ALTER TABLE batches ADD COLUMN image text`);
    await q.query(`ALTER TABLE agents ADD COLUMN template text`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE agents DROP COLUMN template`);
    await q.query(`ALTER TABLE batches DROP COLUMN image`);
    await q.query(`ALTER TABLE batches DROP COLUMN template`);
    await q.query(`ALTER TABLE sessions DROP COLUMN image`);
    await q.query(`ALTER TABLE sessions DROP COLUMN template`);
    await q.query(`DROP TABLE template_versions`);
    await q.query(`DROP TABLE templates`);
  }
}
