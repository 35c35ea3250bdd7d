import type { MigrationInterface, QueryRunner } from 'typeorm';

// Artifacts (libs/artifacts): one row per produced file, with its lineage, pointing at a
// content-addressed blob. `artifact_blobs` has one row per stored content; its row lock
// serialises an ingest of some content against the garbage collection of that content.
// Executions learn which artifact paths were refused.
export class Artifacts1764000000000 implements MigrationInterface {
  name = 'Artifacts1764000000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE artifact_blobs (
        sha256 char(64) PRIMARY KEY,
        size bigint NOT NULL CHECK (size >= 0),
        created_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE artifacts (
        id text PRIMARY KEY,
        tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        thread_id text NOT NULL,
        session_id text,
        execution_id text,
        name text NOT NULL,
        path text NOT NULL,
        size bigint NOT NULL CHECK (size >= 0),
        mime text NOT NULL,
        sha256 char(64) NOT NULL REFERENCES artifact_blobs(sha256),
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz
      )`);
    await q.query(`CREATE INDEX artifacts_tenant_thread_idx ON artifacts (tenant_id, thread_id, created_at)`);
    await q.query(`CREATE INDEX artifacts_sha256_idx ON artifacts (sha256)`);
    await q.query(`CREATE INDEX artifacts_expires_idx ON artifacts (expires_at) WHERE expires_at IS NOT NULL`);
    await q.query(`ALTER TABLE executions ADD COLUMN artifacts_skipped jsonb NOT NULL DEFAULT '[]'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE executions DROP COLUMN artifacts_skipped');
    await q.query('DROP TABLE artifacts');
    await q.query('DROP TABLE artifact_blobs');
  }
}
