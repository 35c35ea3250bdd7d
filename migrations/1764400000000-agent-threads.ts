import type { MigrationInterface, QueryRunner } from 'typeorm';

// Threads of the LangGraph-compatible API: who owns a thread, its metadata, and whether
// a run holds it (one run per thread; the heartbeat frees a thread whose gateway died).
// The conversation itself is in the agent's checkpointer, keyed by tenant and thread.
export class AgentThreads1764400000000 implements MigrationInterface {
  name = 'AgentThreads1764400000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE agent_threads (
        tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        thread_id text NOT NULL,
        metadata jsonb NOT NULL DEFAULT '{}',
        status text NOT NULL DEFAULT 'idle' CHECK (status IN ('idle', 'busy', 'error')),
        run_id text,
        run_heartbeat_at timestamptz,
        error jsonb,
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        PRIMARY KEY (tenant_id, thread_id)
      )`);
    await q.query(`CREATE INDEX agent_threads_tenant_updated_idx ON agent_threads (tenant_id, updated_at DESC)`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE agent_threads');
  }
}
