import type { MigrationInterface, QueryRunner } from 'typeorm';

// Sessions that keep their memory (issue 54, decision 018): the isolation tier a session
// runs on, `hibernated` sessions, and the checkpoints they (and snapshots) are stored
// as: a compressed gVisor image in the artifact blob store, named by its SHA-256 (a
// referenced blob is never collected), owned by a tenant.
export class Hibernation1765600000000 implements MigrationInterface {
  name = 'Hibernation1765600000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions DROP CONSTRAINT sessions_status_check`);
    await q.query(
      `ALTER TABLE sessions ADD CONSTRAINT sessions_status_check CHECK (status IN ('starting', 'ready', 'lost', 'hibernated', 'ended'))`,
    );
    await q.query(`ALTER TABLE sessions ADD COLUMN tier text NOT NULL DEFAULT 'runc' CHECK (tier IN ('runc', 'gvisor'))`);
    await q.query(`
      CREATE TABLE session_checkpoints (
        id text PRIMARY KEY,
        tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        session_id text NOT NULL,
        kind text NOT NULL CHECK (kind IN ('hibernation', 'snapshot')),
        sha256 char(64) NOT NULL REFERENCES artifact_blobs(sha256),
        size_bytes bigint NOT NULL CHECK (size_bytes >= 0),
        tier text NOT NULL,
        image text,
        created_at timestamptz NOT NULL DEFAULT now(),
        expires_at timestamptz
      )`);
    await q.query(`CREATE INDEX session_checkpoints_tenant_idx ON session_checkpoints (tenant_id, kind, created_at DESC)`);
    await q.query(`CREATE INDEX session_checkpoints_sha_idx ON session_checkpoints (sha256)`);
    await q.query(`ALTER TABLE sessions ADD COLUMN hibernation_id text REFERENCES session_checkpoints(id) ON DELETE SET NULL`);
    await q.query(`ALTER TABLE sessions ADD COLUMN hibernated_at timestamptz`);
    await q.query(`ALTER TABLE executions ADD COLUMN resumed_ms integer`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE executions DROP COLUMN resumed_ms`);
    await q.query(`ALTER TABLE sessions DROP COLUMN hibernated_at`);
    await q.query(`ALTER TABLE sessions DROP COLUMN hibernation_id`);
    await q.query(`DROP TABLE session_checkpoints`);
    await q.query(`ALTER TABLE sessions DROP COLUMN tier`);
    await q.query(`UPDATE sessions SET status = 'lost' WHERE status = 'hibernated'`);
    await q.query(`ALTER TABLE sessions DROP CONSTRAINT sessions_status_check`);
    await q.query(`ALTER TABLE sessions ADD CONSTRAINT sessions_status_check CHECK (status IN ('starting', 'ready', 'lost', 'ended'))`);
  }
}
