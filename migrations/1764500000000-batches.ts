import type { MigrationInterface, QueryRunner } from 'typeorm';

// Batches (libs/batches): one row per batch with its counts by status, kept exact by the
// statements that move items between statuses; one row per item, keyed by batch and
// index, written once when it ends. Artifacts an item leaves get the batch and item as
// their lineage (they have no thread).
export class Batches1764500000000 implements MigrationInterface {
  name = 'Batches1764500000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE batches (
        id text PRIMARY KEY,
        tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        status text NOT NULL CHECK (status IN ('queued', 'running', 'completed', 'cancelled')),
        total integer NOT NULL CHECK (total > 0),
        n_queued integer NOT NULL,
        n_running integer NOT NULL DEFAULT 0,
        n_ok integer NOT NULL DEFAULT 0,
        n_error integer NOT NULL DEFAULT 0,
        n_timeout integer NOT NULL DEFAULT 0,
        n_memory integer NOT NULL DEFAULT 0,
        n_killed integer NOT NULL DEFAULT 0,
        n_cancelled integer NOT NULL DEFAULT 0,
        limits jsonb NOT NULL,
        timeout_ms integer NOT NULL,
        concurrency integer NOT NULL,
        idempotency_key text,
        metadata jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        started_at timestamptz,
        finished_at timestamptz,
        expires_at timestamptz
      )`);
    await q.query(`CREATE UNIQUE INDEX batches_idempotency_idx ON batches (tenant_id, idempotency_key) WHERE idempotency_key IS NOT NULL`);
    await q.query(`CREATE INDEX batches_tenant_created_idx ON batches (tenant_id, created_at DESC, id DESC)`);
    await q.query(`CREATE INDEX batches_active_idx ON batches (tenant_id, created_at) WHERE status IN ('queued', 'running')`);
    await q.query(`CREATE INDEX batches_expires_idx ON batches (expires_at) WHERE expires_at IS NOT NULL`);
    await q.query(`
      CREATE TABLE batch_items (
        batch_id text NOT NULL REFERENCES batches(id) ON DELETE CASCADE,
        item_index integer NOT NULL,
        tenant_id text NOT NULL,
        client_id text,
        code text NOT NULL,
        files jsonb,
        status text NOT NULL DEFAULT 'queued'
          CHECK (status IN ('queued', 'admitted', 'running', 'ok', 'error', 'timeout', 'memory', 'killed', 'cancelled')),
        attempts smallint NOT NULL DEFAULT 0,
        worker_id text,
        stdout text,
        stderr text,
        truncated boolean,
        result jsonb,
        error jsonb,
        files_report jsonb,
        artifacts jsonb,
        duration_ms integer,
        admitted_at timestamptz,
        started_at timestamptz,
        finished_at timestamptz,
        PRIMARY KEY (batch_id, item_index)
      )`);
    await q.query(`CREATE INDEX batch_items_status_idx ON batch_items (batch_id, status, item_index)`);
    // What a tenant has in flight (admission reads it on every admission).
    await q.query(`CREATE INDEX batch_items_inflight_idx ON batch_items (tenant_id, batch_id) WHERE status IN ('admitted', 'running')`);
    await q.query(`ALTER TABLE artifacts ALTER COLUMN thread_id DROP NOT NULL`);
    await q.query(`ALTER TABLE artifacts ADD COLUMN batch_id text, ADD COLUMN batch_item integer`);
    await q.query(`CREATE INDEX artifacts_batch_idx ON artifacts (tenant_id, batch_id, batch_item) WHERE batch_id IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP INDEX artifacts_batch_idx');
    await q.query('ALTER TABLE artifacts DROP COLUMN batch_item, DROP COLUMN batch_id');
    await q.query(`DELETE FROM artifacts WHERE thread_id IS NULL`);
    await q.query('ALTER TABLE artifacts ALTER COLUMN thread_id SET NOT NULL');
    await q.query('DROP TABLE batch_items');
    await q.query('DROP TABLE batches');
  }
}
