import type { MigrationInterface, QueryRunner } from 'typeorm';

// The thread filesystem (libs/vfs): files keyed by (tenant, thread, path), a revision
// counter per thread for sync, and a running byte total per tenant for the quota.
export class ThreadFiles1763900000000 implements MigrationInterface {
  name = 'ThreadFiles1763900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE thread_files (
        tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        thread_id text NOT NULL,
        path text COLLATE "C" NOT NULL,
        text_content text,
        bytes bytea,
        content_type text NOT NULL,
        size bigint NOT NULL CHECK (size >= 0),
        sha256 char(64) NOT NULL,
        version integer NOT NULL,
        revision bigint NOT NULL,
        deleted boolean NOT NULL DEFAULT false,
        created_at timestamptz NOT NULL DEFAULT now(),
        modified_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, thread_id, path),
        CONSTRAINT thread_files_content_ck CHECK (
          CASE WHEN deleted THEN text_content IS NULL AND bytes IS NULL
               ELSE (text_content IS NULL) <> (bytes IS NULL) END)
      )`);
    // "What changed since revision N" for the container sync.
    await q.query(`CREATE INDEX thread_files_revision_idx ON thread_files (tenant_id, thread_id, revision)`);
    await q.query(`
      CREATE TABLE thread_revisions (
        tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        thread_id text NOT NULL,
        revision bigint NOT NULL DEFAULT 0,
        PRIMARY KEY (tenant_id, thread_id)
      )`);
    await q.query(`
      CREATE TABLE tenant_storage (
        tenant_id text PRIMARY KEY REFERENCES tenants(id) ON DELETE CASCADE,
        bytes bigint NOT NULL DEFAULT 0 CHECK (bytes >= 0)
      )`);
    // lz4: measured on 100 MB of text, inserted in 0.4 s where pglz took 2 s (and gave
    // up compressing); skipped, with a notice, on a server built without lz4.
    await q.query(`
      DO $$ BEGIN
        ALTER TABLE thread_files ALTER COLUMN text_content SET COMPRESSION lz4;
      EXCEPTION WHEN OTHERS THEN
        RAISE NOTICE 'thread_files: lz4 compression unavailable (%), keeping the default', SQLERRM;
      END $$`);
    // No trigram (pg_trgm GIN) index on text_content, by measurement: on 100 MB of
    // varied text it made writes ~8x slower (~3 MB/s of text indexed, inside the
    // tenant's write lock) and was larger than the text, while a scan with strpos
    // greps 100 MB in ~110-250 ms.
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE tenant_storage');
    await q.query('DROP TABLE thread_revisions');
    await q.query('DROP TABLE thread_files');
  }
}
