import type { MigrationInterface, QueryRunner } from 'typeorm';

// Tenants and their API keys, sessions and executions.
export class InitialSchema1763800000000 implements MigrationInterface {
  name = 'InitialSchema1763800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE tenants (
        id text PRIMARY KEY,
        name text NOT NULL,
        limits jsonb NOT NULL DEFAULT '{}',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now()
      )`);
    await q.query(`
      CREATE TABLE tenant_api_keys (
        id text PRIMARY KEY,
        tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        key_hash text NOT NULL UNIQUE,
        key_prefix text NOT NULL,
        created_at timestamptz NOT NULL DEFAULT now(),
        revoked_at timestamptz
      )`);
    await q.query(`CREATE INDEX tenant_api_keys_tenant_idx ON tenant_api_keys (tenant_id)`);
    await q.query(`
      CREATE TABLE sessions (
        id text PRIMARY KEY,
        tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        thread_id text NOT NULL,
        status text NOT NULL CHECK (status IN ('starting', 'ready', 'lost', 'ended')),
        worker_id text NOT NULL,
        limits jsonb NOT NULL,
        storage text NOT NULL DEFAULT 'tmpfs' CHECK (storage IN ('tmpfs', 'bind')),
        container_id text,
        created_at timestamptz NOT NULL DEFAULT now(),
        last_used_at timestamptz NOT NULL DEFAULT now(),
        ended_at timestamptz,
        end_reason text
      )`);
    // At most one live session per thread.
    await q.query(
      `CREATE UNIQUE INDEX sessions_live_thread_uq ON sessions (tenant_id, thread_id) WHERE status <> 'ended'`,
    );
    await q.query(`CREATE INDEX sessions_tenant_created_idx ON sessions (tenant_id, created_at)`);
    await q.query(`CREATE INDEX sessions_worker_status_idx ON sessions (worker_id, status)`);
    await q.query(`
      CREATE TABLE executions (
        id text PRIMARY KEY,
        tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        session_id text NOT NULL REFERENCES sessions(id) ON DELETE CASCADE,
        thread_id text NOT NULL,
        code text NOT NULL,
        code_sha256 char(64) NOT NULL,
        status text NOT NULL CHECK (status IN ('queued', 'running', 'ok', 'error', 'timeout', 'memory', 'killed')),
        stdout text NOT NULL DEFAULT '',
        stderr text NOT NULL DEFAULT '',
        truncated boolean NOT NULL DEFAULT false,
        result jsonb,
        error jsonb,
        state_lost boolean NOT NULL DEFAULT false,
        files jsonb NOT NULL DEFAULT '{"changed":[],"deleted":[]}',
        artifacts jsonb NOT NULL DEFAULT '[]',
        idempotency_key text,
        timeout_ms integer NOT NULL,
        duration_ms integer,
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz
      )`);
    await q.query(
      `CREATE UNIQUE INDEX executions_idempotency_uq ON executions (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL`,
    );
    await q.query(`CREATE INDEX executions_tenant_session_idx ON executions (tenant_id, session_id, created_at)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE executions');
    await q.query('DROP TABLE sessions');
    await q.query('DROP TABLE tenant_api_keys');
    await q.query('DROP TABLE tenants');
  }
}
