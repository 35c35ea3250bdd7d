import type { MigrationInterface, QueryRunner } from 'typeorm';

// The datasets a session asked for, so that a re-created container gets them again.
export class SessionDatasets1764200000000 implements MigrationInterface {
  name = 'SessionDatasets1764200000000';

  async up(q: QueryRunner): Promise<void> {
    await q.query(`ALTER TABLE sessions ADD COLUMN datasets jsonb NOT NULL DEFAULT '[]'`);
  }

  async down(q: QueryRunner): Promise<void> {
    await q.query('ALTER TABLE sessions DROP COLUMN datasets');
  }
}
