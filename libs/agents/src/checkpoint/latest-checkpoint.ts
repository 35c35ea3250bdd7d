// The thread's latest root checkpoint and whether writes are pending on it: what every
// run's first load asks PostgreSQL before the checkpointer answers from memory
// (CachedPostgresSaver.getTuple).
export interface LatestCheckpoint {
  // The checkpointer's thread key (`configurable.thread_id`).
  threadId: string;
  // null: the thread has no checkpoint.
  checkpointId: string | null;
  pending: boolean;
}

// A run's `configurable` may carry its thread's LatestCheckpoint under this key, read by
// a statement that ran after every earlier run's checkpoint writes had committed (the
// thread claim, see docs/agent.md); the run's first load then skips its own query.
export const CONFIG_LATEST_CHECKPOINT = 'drydock_latest_checkpoint';

// The query, with the checkpointer's thread key as `threadParam` (e.g. "$1"): one row,
// checkpoint_id and pending, or none.
export function latestCheckpointSql(schema: string, threadParam: string): string {
  return `SELECT cp.checkpoint_id,
          EXISTS (SELECT 1 FROM "${schema}".checkpoint_writes w
                   WHERE w.thread_id = cp.thread_id AND w.checkpoint_ns = cp.checkpoint_ns
                     AND w.checkpoint_id = cp.checkpoint_id) AS pending
     FROM "${schema}".checkpoints cp
    WHERE cp.thread_id = ${threadParam} AND cp.checkpoint_ns = ''
    ORDER BY cp.checkpoint_id DESC LIMIT 1`;
}
