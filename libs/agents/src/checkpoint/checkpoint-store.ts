import { Logger } from '@nestjs/common';
import pg from 'pg';
import { CHECKPOINT_SCHEMA } from './checkpoint-schema.js';
import { CachedPostgresSaver } from './cached-postgres.saver.js';

// A constant key for pg_advisory_lock so two gateways starting together do not both
// run the checkpointer's migrations.
const SETUP_LOCK_KEY = 0x64727964; // "dryd"

// Where the agent's conversation state lives: LangGraph's checkpointer (CachedPostgresSaver)
// over its own pg Pool, and the start-up that creates or upgrades its tables.
export class CheckpointStore {
  readonly saver: CachedPostgresSaver;
  private readonly pool: pg.Pool;

  constructor(options: { databaseUrl: string; cacheThreads: number; cacheIdleMs: number }) {
    this.pool = new pg.Pool({ connectionString: options.databaseUrl, max: 10 });
    // An idle connection the server closed (a PostgreSQL restart) is an 'error' event
    // on the pool; without a listener it would take the gateway down. The pool drops
    // that connection and opens a new one on the next query.
    this.pool.on('error', (error) => new Logger(CheckpointStore.name).warn(`checkpoint pool: ${error.message}`));
    this.saver = new CachedPostgresSaver(this.pool, { schema: CHECKPOINT_SCHEMA, maxThreads: options.cacheThreads, idleMs: options.cacheIdleMs });
  }

  // Creates or upgrades the checkpointer's tables, once across concurrent starts.
  async setup(): Promise<void> {
    const client = await this.pool.connect();
    try {
      await client.query('SELECT pg_advisory_lock($1)', [SETUP_LOCK_KEY]);
      try {
        await this.saver.setup();
      } finally {
        await client.query('SELECT pg_advisory_unlock($1)', [SETUP_LOCK_KEY]);
      }
    } finally {
      client.release();
    }
  }

  close(): Promise<void> {
    this.saver.close();
    return this.pool.end();
  }
}
