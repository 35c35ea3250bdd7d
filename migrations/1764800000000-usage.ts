import type { MigrationInterface, QueryRunner } from 'typeorm';

// Usage metering: the CPU time each execution and batch item used (the sandbox's cgroup
// counter while the code ran), and a per-tenant, per-day index of batch items.
export class Usage1764800000000 implements MigrationInterface {
  name = 'Usage1764800000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE executions ADD COLUMN cpu_ms double precision`);
    await q.query(`ALTER TABLE batch_items ADD COLUMN cpu_ms double precision`);
    await q.query(`CREATE INDEX batch_items_tenant_finished_idx ON batch_items (tenant_id, finished_at) WHERE finished_at IS NOT NULL`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query(`DROP INDEX batch_items_tenant_finished_idx`);
    await q.query(`ALTER TABLE batch_items DROP COLUMN cpu_ms`);
    await q.query(`ALTER TABLE executions DROP COLUMN cpu_ms`);
  }
}
