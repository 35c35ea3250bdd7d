import type { RunnableConfig } from '@langchain/core/runnables';
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointMetadata,
  CheckpointTuple,
  PendingWrite,
  SerializerProtocol,
} from '@langchain/langgraph-checkpoint';
import { copyCheckpoint } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type pg from 'pg';
import { MessageCachingSerializer } from './message-caching.serializer.js';

export interface CachedPostgresSaverOptions {
  schema: string;
  // How many threads' latest checkpoints are kept in memory (least recently used go
  // first). 0 turns the cache off.
  maxThreads: number;
  // Default: LangGraph's JSON serializer, remembering each message's serialized form.
  serde?: SerializerProtocol;
}

interface CachedLatest {
  checkpointId: string;
  tuple: CheckpointTuple;
}

// LangGraph's Postgres checkpointer, made cheap on the path every agent turn takes.
//
// A run starts by loading its thread's latest checkpoint. The stock saver does that with
// one query that aggregates every channel blob as hex text, then revives each message
// through LangChain's loader: together the larger part of a turn's cost, and growing
// with the conversation. Here the checkpoint a run writes is remembered in process, and
// the next run's load asks PostgreSQL only for the thread's latest checkpoint id and
// whether writes are pending on it (an index lookup); when that id is the one
// remembered, and nothing is pending, the remembered tuple is the answer. Any other
// gateway writing to the thread moves the latest id (or adds writes), so the check
// fails and the full load runs: PostgreSQL stays the only source of truth.
//
// The remembered state shares its message objects with the run that wrote it; LangGraph
// treats state values as immutable (reducers build new arrays and objects), and so does
// everything in Drydock that reads state.
//
// A write also goes out as one statement (channel blobs and the checkpoint row in one
// INSERT ... WITH), instead of a transaction of one round trip per blob.
export class CachedPostgresSaver extends PostgresSaver {
  private readonly latest = new Map<string, CachedLatest>();
  private readonly maxThreads: number;
  private readonly schema: string;

  constructor(
    private readonly db: pg.Pool,
    options: CachedPostgresSaverOptions,
  ) {
    super(db, options.serde ?? new MessageCachingSerializer(), { schema: options.schema });
    this.schema = options.schema;
    this.maxThreads = options.maxThreads;
  }

  // How many threads are remembered (for tests and metrics).
  get cachedThreads(): number {
    return this.latest.size;
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const { thread_id: threadId, checkpoint_ns: ns = '', checkpoint_id: checkpointId } = config.configurable ?? {};
    // A specific (older) checkpoint, or a subgraph's: the stock load.
    if (checkpointId || ns !== '' || this.maxThreads === 0 || typeof threadId !== 'string') return super.getTuple(config);

    const key = cacheKey(threadId, ns);
    const cached = this.latest.get(key);
    if (cached) {
      const { rows } = await this.db.query<{ checkpoint_id: string; pending: boolean }>(
        `SELECT cp.checkpoint_id,
                EXISTS (SELECT 1 FROM ${this.table('checkpoint_writes')} w
                         WHERE w.thread_id = cp.thread_id AND w.checkpoint_ns = cp.checkpoint_ns
                           AND w.checkpoint_id = cp.checkpoint_id) AS pending
           FROM ${this.table('checkpoints')} cp
          WHERE cp.thread_id = $1 AND cp.checkpoint_ns = $2
          ORDER BY cp.checkpoint_id DESC LIMIT 1`,
        [threadId, ns],
      );
      const row = rows[0];
      if (row && row.checkpoint_id === cached.checkpointId && !row.pending) {
        this.touch(key, cached);
        return copyTuple(cached.tuple);
      }
      this.latest.delete(key);
    }

    const tuple = await super.getTuple(config);
    const id = tuple?.config.configurable?.checkpoint_id as string | undefined;
    if (tuple && id && (tuple.pendingWrites?.length ?? 0) === 0) this.touch(key, { checkpointId: id, tuple: copyTuple(tuple) });
    return tuple;
  }

  override async put(
    config: RunnableConfig,
    checkpoint: Checkpoint,
    metadata: CheckpointMetadata,
    newVersions: ChannelVersions,
  ): Promise<RunnableConfig> {
    if (config.configurable === undefined) throw new Error('Missing "configurable" field in "config" param');
    const { thread_id: threadId, checkpoint_ns: ns = '', checkpoint_id: parentId } = config.configurable;
    const key = cacheKey(threadId, ns);
    // Whatever happens below, what was remembered for this thread may no longer be latest.
    this.latest.delete(key);

    const nextConfig = { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
    const [blobs, serializedMetadata] = await Promise.all([
      this._dumpBlobs(threadId, ns, checkpoint.channel_values, newVersions),
      this._dumpMetadata(metadata),
    ]);
    const params: unknown[] = [threadId, ns, checkpoint.id, parentId ?? null, this._dumpCheckpoint(checkpoint), serializedMetadata];
    const values = blobs.map(([, , channel, version, type, blob]) => {
      params.push(channel, version, type, blob ?? null);
      const n = params.length;
      return `($1, $2, $${n - 3}, $${n - 2}, $${n - 1}, $${n}::bytea)`;
    });
    const insertCheckpoint = `INSERT INTO ${this.table('checkpoints')}
        (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
      VALUES ($1, $2, $3, $4, $5, $6)
      ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
      DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata`;
    // One statement, so the blobs and the row that points at them land together.
    const sql = values.length
      ? `WITH blobs AS (
           INSERT INTO ${this.table('checkpoint_blobs')} (thread_id, checkpoint_ns, channel, version, type, blob)
           VALUES ${values.join(', ')}
           ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
         )
         ${insertCheckpoint}`
      : insertCheckpoint;
    await this.db.query(sql, params);

    if (this.maxThreads > 0 && ns === '') {
      this.touch(key, {
        checkpointId: checkpoint.id,
        tuple: {
          config: nextConfig,
          checkpoint: storedCheckpoint(checkpoint),
          metadata: (await this._loadMetadata(serializedMetadata)) as CheckpointMetadata,
          parentConfig: parentId ? { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: parentId } } : undefined,
          pendingWrites: [],
        },
      });
    }
    return nextConfig;
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    const { thread_id: threadId, checkpoint_ns: ns = '' } = config.configurable ?? {};
    this.latest.delete(cacheKey(threadId, ns));
    await super.putWrites(config, writes, taskId);
  }

  override async deleteThread(threadId: string): Promise<void> {
    for (const key of [...this.latest.keys()]) if (key.startsWith(`${threadId}\u0000`)) this.latest.delete(key);
    await super.deleteThread(threadId);
  }

  private touch(key: string, entry: CachedLatest): void {
    this.latest.delete(key);
    this.latest.set(key, entry);
    while (this.latest.size > this.maxThreads) this.latest.delete(this.latest.keys().next().value as string);
  }

  private table(name: string): string {
    return `"${this.schema}".${name}`;
  }
}

function cacheKey(threadId: unknown, ns: unknown): string {
  return `${String(threadId)}\u0000${String(ns)}`;
}

// What a load from PostgreSQL would give back for a checkpoint just written: values
// only for channels that have a version (those are the ones with blobs) and hold a
// value (an emptied channel's blob is skipped on load).
function storedCheckpoint(checkpoint: Checkpoint): Checkpoint {
  const copy = copyCheckpoint(checkpoint);
  for (const [channel, value] of Object.entries(copy.channel_values)) {
    if (value === undefined || !(channel in copy.channel_versions)) delete copy.channel_values[channel];
  }
  return copy;
}

// Callers may change the tuple's own objects (LangGraph replaces config and copies the
// checkpoint); the channel values inside are shared and never changed in place.
function copyTuple(tuple: CheckpointTuple): CheckpointTuple {
  return {
    config: { ...tuple.config, configurable: { ...tuple.config.configurable } },
    checkpoint: copyCheckpoint(tuple.checkpoint),
    metadata: tuple.metadata ? { ...tuple.metadata } : tuple.metadata,
    parentConfig: tuple.parentConfig ? { ...tuple.parentConfig, configurable: { ...tuple.parentConfig.configurable } } : undefined,
    pendingWrites: [...(tuple.pendingWrites ?? [])],
  };
}
