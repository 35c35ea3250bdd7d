import type { MigrationInterface, QueryRunner } from 'typeorm';

// Egress control (issue 53): the network policy a session, a batch or an agent
// definition asked for (null: no network), and the log of every connection attempt
// through the platform's proxy.
export class Egress1765500000000 implements MigrationInterface {
  name = 'Egress1765500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions ADD COLUMN network jsonb`);
    await q.query(`ALTER TABLE batches ADD COLUMN network jsonb`);
    await q.query(`ALTER TABLE agents ADD COLUMN network jsonb`);
    await q.query(`
      CREATE TABLE egress_connections (
        id bigint GENERATED ALWAYS AS IDENTITY PRIMARY KEY,
        tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        session_id text,
        batch_id text,
        batch_item integer,
        worker_id text NOT NULL,
        host text NOT NULL,
        port integer NOT NULL,
        address text,
        verdict text NOT NULL,
        reason text NOT NULL,
        rule text,
        bytes_in bigint NOT NULL DEFAULT 0,
        bytes_out bigint NOT NULL DEFAULT 0,
        started_at timestamptz NOT NULL,
        duration_ms integer NOT NULL DEFAULT 0
      )`);
    await q.query(`CREATE INDEX egress_connections_session_idx ON egress_connections (tenant_id, session_id, started_at)`);
    await q.query(`CREATE INDEX egress_connections_started_idx ON egress_connections (started_at)`);
    await q.query(`CREATE INDEX egress_connections_batch_idx ON egress_connections (batch_id, started_at) WHERE batch_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP TABLE egress_connections`);
    await q.query(`ALTER TABLE agents DROP COLUMN network`);
    await q.query(`ALTER TABLE batches DROP COLUMN network`);
    await q.query(`ALTER TABLE sessions DROP COLUMN network`);
  }
}
