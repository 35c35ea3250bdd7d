import type { MigrationInterface, QueryRunner } from 'typeorm';

// Agent definitions (libs/agents/src/definitions): one row per agent of a tenant, its
// name unique within the tenant. python_modules is json rather than jsonb so that each
// function schema keeps its key order (parameters in signature order, exports
// byte-identical); nothing queries inside it.
export class Agents1764300000000 implements MigrationInterface {
  name = 'Agents1764300000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`
      CREATE TABLE agents (
        id text PRIMARY KEY,
        tenant_id text NOT NULL REFERENCES tenants(id) ON DELETE CASCADE,
        name text NOT NULL,
        instructions text NOT NULL DEFAULT '',
        model text NOT NULL,
        tools jsonb NOT NULL DEFAULT '[]',
        backend_routes jsonb NOT NULL DEFAULT '[]',
        python_modules json NOT NULL DEFAULT '[]',
        created_at timestamptz NOT NULL DEFAULT now(),
        updated_at timestamptz NOT NULL DEFAULT now(),
        CONSTRAINT agents_tenant_name_uq UNIQUE (tenant_id, name)
      )`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('DROP TABLE agents');
  }
}
