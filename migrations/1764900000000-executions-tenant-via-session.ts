import type { MigrationInterface, QueryRunner } from 'typeorm';

// An execution reaches its tenant through its session: the insert (the sessions
// repository's one statement) takes tenant_id from the session row, and deleting a tenant
// still deletes its executions (tenants -> sessions -> executions, ON DELETE CASCADE
// both). The foreign key from executions.tenant_id to tenants added nothing but a cost:
// every insert locked the tenant's one row FOR KEY SHARE, so concurrent executions of a
// tenant shared that lock (a multixact) and each wrote a WAL record for it. Measured on
// the 2-core reference machine, 16 clients: PostgreSQL's CPU per execution 0.71-0.90 ms
// with it, 0.62-0.64 ms without (issue 17).
export class ExecutionsTenantViaSession1764900000000 implements MigrationInterface {
  name = 'ExecutionsTenantViaSession1764900000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE executions DROP CONSTRAINT IF EXISTS executions_tenant_id_fkey`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(
      `ALTER TABLE executions ADD CONSTRAINT executions_tenant_id_fkey FOREIGN KEY (tenant_id) REFERENCES tenants(id) ON DELETE CASCADE`,
    );
  }
}
