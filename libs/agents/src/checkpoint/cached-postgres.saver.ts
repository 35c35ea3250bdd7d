import type { RunnableConfig } from '@langchain/core/runnables';
import { isBaseMessage, type BaseMessage } from '@langchain/core/messages';
import type {
  ChannelVersions,
  Checkpoint,
  CheckpointMetadata,
  CheckpointTuple,
  CheckpointListOptions,
  PendingWrite,
} from '@langchain/langgraph-checkpoint';
import { copyCheckpoint, WRITES_IDX_MAP } from '@langchain/langgraph-checkpoint';
import { PostgresSaver } from '@langchain/langgraph-checkpoint-postgres';
import type pg from 'pg';
import { commitWithoutFlushCte } from '@drydock/core';
import { checkpointCarrierOf, ThreadNotHeldError, type CarriedWrite, type WriteCondition } from './checkpoint-carrier.js';
import { CONFIG_LATEST_CHECKPOINT, latestCheckpointSql, type LatestCheckpoint } from './latest-checkpoint.js';
import { isMessageList, MessageCachingSerializer, MessagesDelta, messagesDeltaType } from './message-caching.serializer.js';

export interface CachedPostgresSaverOptions {
  schema: string;
  // How many threads' latest checkpoints are kept in memory (least recently used go
  // first). 0 turns the cache off.
  maxThreads: number;
  // A thread not loaded or written for this long is dropped from memory, so a thread
  // deleted through another gateway (or with its tenant) leaves this one's memory
  // within it. 0 keeps threads until maxThreads pushes them out.
  idleMs?: number;
  // The clock, for tests.
  now?: () => number;
  // A message list is written in full at least once per this many versions of its
  // channel, and as a delta from the previous version otherwise. 1 writes every
  // version in full (LangGraph's own layout).
  snapshotEvery?: number;
}

interface CachedLatest {
  checkpointId: string;
  tuple: CheckpointTuple;
  // Per message-list channel: how many deltas lead from its last full version to the
  // one in this checkpoint (unknown after a load: the next write is then in full).
  deltaDepth: Record<string, number>;
  // When the thread was last loaded or written here (set by touch).
  usedAt?: number;
  // False once this gateway has written pending writes to the checkpoint (a step of a
  // run with "async"/"sync" durability): loads then go to PostgreSQL, while the next
  // checkpoint can still be written as a delta from this one.
  servable: boolean;
}

const DEFAULT_SNAPSHOT_EVERY = 20;

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
// A write goes out as one statement (channel blobs and the checkpoint row in one
// INSERT ... WITH), instead of a transaction of one round trip per blob; a run's last
// write goes out within its thread's release (CheckpointCarrier). And the stock
// layout stores the whole message list in every checkpoint, so each turn wrote the
// conversation again and a thread's storage grew with the square of its length. Here,
// when the run started from the remembered checkpoint, the list is stored as the
// messages appended to that checkpoint's version (blob type
// `drydock-messages-delta/<kept>/<base version>`), in full every `snapshotEvery`
// versions; a load follows the chain back to the full version with one recursive
// query. (LangGraph's stock PostgresSaver cannot read those blobs; this one reads its.)

export class CachedPostgresSaver extends PostgresSaver {
  private readonly latest = new Map<string, CachedLatest>();
  private readonly maxThreads: number;
  private readonly idleMs: number;
  private readonly now: () => number;
  private sweeper: NodeJS.Timeout | undefined;
  private readonly snapshotEvery: number;
  private readonly schema: string;
  private readonly messagesSerde: MessageCachingSerializer;

  constructor(
    private readonly db: pg.Pool,
    options: CachedPostgresSaverOptions,
  ) {
    const serde = new MessageCachingSerializer();
    super(db, serde, { schema: options.schema });
    this.messagesSerde = serde;
    this.schema = options.schema;
    this.maxThreads = options.maxThreads;
    this.idleMs = options.idleMs ?? 0;
    this.now = options.now ?? Date.now;
    // A gateway with no agent traffic still lets idle threads go; the timer never keeps
    // the process alive, and close() stops it.
    if (this.idleMs > 0 && this.maxThreads > 0) {
      this.sweeper = setInterval(() => this.dropIdle(), Math.min(this.idleMs, 60_000));
      this.sweeper.unref();
    }
    this.snapshotEvery = options.snapshotEvery ?? DEFAULT_SNAPSHOT_EVERY;
  }

  // How many threads are remembered (for tests and metrics).
  get cachedThreads(): number {
    return this.latest.size;
  }

  override async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const { thread_id: threadId, checkpoint_ns: ns = '', checkpoint_id: checkpointId } = config.configurable ?? {};
    // A specific (older) checkpoint, or a subgraph's: a load from PostgreSQL.
    if (checkpointId || ns !== '' || this.maxThreads === 0 || typeof threadId !== 'string') return this.load(config);

    const key = cacheKey(threadId, ns);
    const cached = this.latest.get(key);
    if (cached) {
      const row = await this.latestRow(config, threadId);
      if (row && cached.servable && row.checkpoint_id === cached.checkpointId && !row.pending) {
        this.touch(key, cached);
        return copyTuple(cached.tuple);
      }
      this.latest.delete(key);
    }

    const tuple = await this.load(config);
    const id = tuple?.config.configurable?.checkpoint_id as string | undefined;
    if (tuple && id && (tuple.pendingWrites?.length ?? 0) === 0) this.touch(key, { checkpointId: id, tuple: copyTuple(tuple), deltaDepth: {}, servable: true });
    return tuple;
  }

  // The thread's latest checkpoint id and whether writes are pending on it: from the
  // run's configurable when its claim read them (see LatestCheckpoint), else one query.
  private async latestRow(config: RunnableConfig, threadId: string): Promise<{ checkpoint_id: string; pending: boolean } | undefined> {
    const known = config.configurable?.[CONFIG_LATEST_CHECKPOINT] as LatestCheckpoint | undefined;
    if (known?.threadId === threadId) return known.checkpointId === null ? undefined : { checkpoint_id: known.checkpointId, pending: known.pending };
    // A named statement (as the writes are), planned once per connection: it is on the
    // path of every run.
    const { rows } = await this.db.query<{ checkpoint_id: string; pending: boolean }>({
      name: `${this.schema}.checkpoints.latest`,
      text: latestCheckpointSql(this.schema, '$1'),
      values: [threadId],
    });
    return rows[0];
  }

  override async *list(config: RunnableConfig, options?: CheckpointListOptions): AsyncGenerator<CheckpointTuple> {
    const rebuilt = new Map<string, BaseMessage[]>();
    for await (const tuple of super.list(config, options)) yield await this.rebuildMessageLists(tuple, rebuilt);
  }

  private async load(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const tuple = await super.getTuple(config);
    return tuple && this.rebuildMessageLists(tuple, new Map());
  }

  // Replaces each delta in a loaded checkpoint by the list it stands for. `rebuilt`
  // holds lists already rebuilt in this call, by channel and version.
  private async rebuildMessageLists(tuple: CheckpointTuple, rebuilt: Map<string, BaseMessage[]>): Promise<CheckpointTuple> {
    const { thread_id: threadId, checkpoint_ns: ns = '' } = tuple.config.configurable ?? {};
    const values = tuple.checkpoint.channel_values;
    for (const [channel, value] of Object.entries(values)) {
      if (!(value instanceof MessagesDelta)) continue;
      values[channel] = value.applyTo(await this.messageList(threadId, ns, channel, value.baseVersion, rebuilt));
    }
    return tuple;
  }

  // A channel's message list at one version: the chain of deltas back to a full version
  // comes in one query, and is applied from the oldest up.
  private async messageList(threadId: string, ns: string, channel: string, version: string, rebuilt: Map<string, BaseMessage[]>): Promise<BaseMessage[]> {
    const memoKey = `${channel}\u0000${version}`;
    const known = rebuilt.get(memoKey);
    if (known) return known;
    const { rows } = await this.db.query<{ version: string; type: string; blob: Buffer | null }>(
      `WITH RECURSIVE chain (version, type, blob, depth) AS (
         SELECT version, type, blob, 0 FROM ${this.table('checkpoint_blobs')}
          WHERE thread_id = $1 AND checkpoint_ns = $2 AND channel = $3 AND version = $4
         UNION ALL
         SELECT b.version, b.type, b.blob, c.depth + 1
           FROM chain c
           JOIN ${this.table('checkpoint_blobs')} b
             ON b.thread_id = $1 AND b.checkpoint_ns = $2 AND b.channel = $3
            AND b.version = substring(c.type FROM '^drydock-messages-delta/[0-9]+/(.*)$')
          WHERE c.depth < 10000
       )
       SELECT version, type, blob FROM chain ORDER BY depth DESC`,
      [threadId, ns, channel, version],
    );
    const full = rows[0];
    if (!full || full.type.startsWith('drydock-messages-delta/')) {
      throw new Error(`checkpoint blobs of thread ${threadId}, channel ${channel}: the chain from version ${version} has no full version`);
    }
    let list: BaseMessage[] = full.type === 'empty' || full.blob === null ? [] : ((await this.serde.loadsTyped(full.type, full.blob)) as BaseMessage[]);
    rebuilt.set(`${channel}\u0000${full.version}`, list);
    for (const row of rows.slice(1)) {
      const delta = (await this.serde.loadsTyped(row.type, row.blob ?? new Uint8Array())) as MessagesDelta;
      list = delta.applyTo(list);
      rebuilt.set(`${channel}\u0000${row.version}`, list);
    }
    return list;
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
    // A write the run's carrier holds goes out first, and is remembered: this one may
    // follow it as a delta.
    const carrier = checkpointCarrierOf(config.configurable);
    await carrier?.runHeld();
    // The checkpoint this one follows, when it is the one remembered.
    const cached = this.latest.get(key);
    const previous = cached && parentId && cached.checkpointId === parentId ? cached : undefined;
    // Whatever happens below, what was remembered for this thread may no longer be latest.
    this.latest.delete(key);

    const nextConfig = { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: checkpoint.id } };
    // Channels this checkpoint does not write keep their depth. A depth is kept for
    // message lists only (deltaOf relies on it).
    const deltaDepth: Record<string, number> = { ...(previous?.deltaDepth ?? {}) };
    const deltas: Array<[string, string, string, string, string, Uint8Array]> = [];
    const others: ChannelVersions = {};
    for (const [channel, version] of Object.entries(newVersions)) {
      const delta = this.deltaOf(channel, checkpoint.channel_values[channel], previous);
      if (delta) {
        deltas.push([threadId, ns, channel, String(version), delta.type, delta.blob]);
        deltaDepth[channel] = delta.depth;
      } else {
        others[channel] = version;
        if (isMessageList(checkpoint.channel_values[channel])) deltaDepth[channel] = 0;
        else delete deltaDepth[channel];
      }
    }
    const [fullBlobs, serializedMetadata] = await Promise.all([
      this._dumpBlobs(threadId, ns, checkpoint.channel_values, others),
      this._dumpMetadata(metadata),
    ]);
    const blobs = [...fullBlobs, ...deltas];
    const values: unknown[] = [threadId, ns, checkpoint.id, parentId ?? null, this._dumpCheckpoint(checkpoint), serializedMetadata];
    for (const [, , channel, version, type, blob] of blobs) values.push(channel, version, type, blob ?? null);
    const write = {
      values,
      shape: `${this.schema}.checkpoints.put.${blobs.length}`,
      ctes: (first: number, condition?: string) => this.writeCtes(first, blobs.length, condition),
    };

    // What a load would give back, remembered once the write has committed.
    const storedMetadata = this.maxThreads > 0 && ns === '' ? ((await this._loadMetadata(serializedMetadata)) as CheckpointMetadata) : undefined;
    const committed = () => {
      // Not over a newer checkpoint of the thread (ids grow with time), should writes of
      // one run commit out of order.
      const current = this.latest.get(key);
      if (!storedMetadata || (current && current.checkpointId > checkpoint.id)) return;
      this.touch(key, {
        checkpointId: checkpoint.id,
        tuple: {
          config: nextConfig,
          checkpoint: storedCheckpoint(checkpoint),
          metadata: storedMetadata,
          parentConfig: parentId ? { configurable: { thread_id: threadId, checkpoint_ns: ns, checkpoint_id: parentId } } : undefined,
          pendingWrites: [],
        },
        deltaDepth,
        servable: true,
      });
    };
    if (carrier?.holds) {
      // The run's release writes it (see CheckpointCarrier), and remembers it once committed.
      await carrier.hold({ ...write, committed }, () => this.runWrite(write, true, carrier.onlyIf));
    } else {
      // Within a run that ends with its release, the commit need not wait for its flush.
      await this.runWrite(write, carrier !== undefined, carrier?.onlyIf);
      committed();
    }
    return nextConfig;
  }

  // A checkpoint's row and its blobs as data-modifying CTEs, parameters from $first: the
  // thread, namespace, checkpoint id, parent id, checkpoint and metadata, then channel,
  // version, type and blob per blob. The blobs and the row that points at them land
  // together, in one statement; with `condition` (SQL), neither lands unless it holds.
  private writeCtes(first: number, blobCount: number, condition?: string): string {
    const p = (i: number) => `$${first + i}`;
    const rows = Array.from({ length: blobCount }, (_, k) => {
      const at = 6 + 4 * k;
      return `(${p(0)}, ${p(1)}, ${p(at)}, ${p(at + 1)}, ${p(at + 2)}, ${p(at + 3)}::bytea)`;
    });
    // INSERT ... SELECT takes the columns' types for the checkpoint's parameters; the
    // blobs' VALUES, in a subquery, are text but for the blob, cast.
    const checkpointValues = [0, 1, 2, 3, 4, 5].map(p).join(', ');
    const checkpointRow = `checkpoint_row AS (
        INSERT INTO ${this.table('checkpoints')} (thread_id, checkpoint_ns, checkpoint_id, parent_checkpoint_id, checkpoint, metadata)
        ${condition ? `SELECT ${checkpointValues} WHERE ${condition}` : `VALUES (${checkpointValues})`}
        ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id)
        DO UPDATE SET checkpoint = EXCLUDED.checkpoint, metadata = EXCLUDED.metadata
      )`;
    if (rows.length === 0) return checkpointRow;
    return `checkpoint_blobs AS (
        INSERT INTO ${this.table('checkpoint_blobs')} (thread_id, checkpoint_ns, channel, version, type, blob)
        ${valuesWhere(rows, condition)}
        ON CONFLICT (thread_id, checkpoint_ns, channel, version) DO NOTHING
      ), ${checkpointRow}`;
  }

  // A checkpoint write as a statement of its own. `flushedByRelease`: within a run that
  // ends with its thread's release (see CheckpointCarrier), which waits for the WAL flush
  // for it; this commit need not. `onlyIf`: it lands only if that holds (the run still
  // holds its thread), else nothing is written and ThreadNotHeldError is thrown.
  private async runWrite(write: Omit<CarriedWrite, 'committed'>, flushedByRelease: boolean, onlyIf?: WriteCondition): Promise<void> {
    // The condition is evaluated once, and the answer says how it came out.
    const ctes = [
      ...(flushedByRelease ? [commitWithoutFlushCte()] : []),
      `held AS MATERIALIZED (SELECT ${onlyIf ? onlyIf.sql(write.values.length + 1) : 'true'} AS ok)`,
      write.ctes(1, onlyIf ? '(SELECT ok FROM held)' : undefined),
    ];
    const text = `WITH ${ctes.join(', ')} SELECT held.ok AS held FROM held${flushedByRelease ? ', durability' : ''}`;
    // A named statement, as in latestRow: one text per blob count, durability and condition.
    const name = `${write.shape}${flushedByRelease ? '.unflushed' : ''}${onlyIf ? '.held' : ''}`;
    const { rows } = await this.db.query<{ held: boolean }>({ name, text, values: [...write.values, ...(onlyIf?.values ?? [])] });
    if (rows[0]?.held !== true) throw new ThreadNotHeldError(String(write.values[0]));
  }

  // A message list as the messages appended to its version in the previous checkpoint,
  // when that list is known here, shares a first part with this one (the same message
  // objects), and is fewer than snapshotEvery deltas from a full version.
  private deltaOf(channel: string, value: unknown, previous: CachedLatest | undefined) {
    if (!previous || this.snapshotEvery <= 1 || !Array.isArray(value) || value.length === 0) return undefined;
    const before = previous.tuple.checkpoint.channel_values[channel];
    const baseVersion = previous.tuple.checkpoint.channel_versions[channel];
    // A depth is kept for message lists only: `before` is one.
    const depth = previous.deltaDepth[channel];
    if (!Array.isArray(before) || baseVersion === undefined || depth === undefined || depth + 1 >= this.snapshotEvery) return undefined;
    let kept = 0;
    while (kept < before.length && kept < value.length && before[kept] === value[kept]) kept++;
    if (kept === 0) return undefined;
    // The kept messages are `before`'s own objects; only the appended ones are checked.
    const appended: unknown[] = value.slice(kept);
    if (!appended.every((item) => isBaseMessage(item))) return undefined;
    return {
      type: messagesDeltaType(kept, String(baseVersion)),
      blob: this.messagesSerde.dumpsMessages(appended as BaseMessage[]),
      depth: depth + 1,
    };
  }

  // The next version of a channel. The stock saver counts 1, 2, 3..., so a run started
  // from an older checkpoint (a fork) gives its channels the very versions the newer
  // branch already wrote, the blob insert meets those rows (ON CONFLICT DO NOTHING),
  // and the fork's checkpoint comes back with the other branch's messages. As
  // LangGraph's Python savers do, a random fraction makes each new version unique; the
  // whole part still counts up, so versions keep their order (old integer versions
  // included).
  override getNextVersion(current: number | undefined): number {
    const whole = typeof current === 'number' ? Math.floor(current) + 1 : 1;
    return whole + Math.random();
  }

  override async putWrites(config: RunnableConfig, writes: PendingWrite[], taskId: string): Promise<void> {
    const { thread_id: threadId, checkpoint_ns: ns = '', checkpoint_id: checkpointId } = config.configurable ?? {};
    const key = cacheKey(String(threadId), String(ns));
    // Writes on another checkpoint do not change the remembered one (and a load checks
    // that the remembered one is still the latest).
    const cached = this.latest.get(key);
    if (cached && cached.checkpointId === checkpointId) cached.servable = false;
    // After the checkpoint they belong to, should the run's carrier hold it.
    const carrier = checkpointCarrierOf(config.configurable);
    await carrier?.runHeld();
    if (writes.length === 0) return;
    // As the stock saver: a call whose writes all go to LangGraph's special channels
    // (error, interrupt, scheduled, resume: a fixed idx each) replaces earlier ones, the
    // last of one idx winning; any other keeps what is stored.
    const replace = writes.every(([channel]) => channel in WRITES_IDX_MAP);
    let rows = await this._dumpWrites(String(threadId), String(ns), checkpointId as string, taskId, writes);
    if (replace) rows = [...new Map(rows.map((row) => [row[4], row])).values()];
    const values: unknown[] = [threadId, ns, checkpointId, taskId];
    for (const [, , , , idx, channel, type, blob] of rows) values.push(idx, channel, type, blob);
    // One statement instead of the stock saver's transaction of a round trip per write,
    // and under the run's condition like its checkpoints.
    await this.runWrite(
      {
        values,
        shape: `${this.schema}.checkpoint_writes.put.${rows.length}${replace ? '.replace' : ''}`,
        ctes: (first, condition) => this.pendingWritesCte(first, rows.length, replace, condition),
      },
      carrier !== undefined,
      carrier?.onlyIf,
    );
  }

  // Pending writes as a data-modifying CTE, parameters from $first: the thread,
  // namespace, checkpoint id and task id, then idx, channel, type and blob per write.
  private pendingWritesCte(first: number, count: number, replace: boolean, condition?: string): string {
    const p = (i: number) => `$${first + i}`;
    const rows = Array.from({ length: count }, (_, k) => {
      const at = 4 + 4 * k;
      return `(${p(0)}, ${p(1)}, ${p(2)}, ${p(3)}, ${p(at)}::integer, ${p(at + 1)}, ${p(at + 2)}, ${p(at + 3)}::bytea)`;
    });
    return `pending_writes AS (
        INSERT INTO ${this.table('checkpoint_writes')} (thread_id, checkpoint_ns, checkpoint_id, task_id, idx, channel, type, blob)
        ${valuesWhere(rows, condition)}
        ON CONFLICT (thread_id, checkpoint_ns, checkpoint_id, task_id, idx)
        ${replace ? 'DO UPDATE SET channel = EXCLUDED.channel, type = EXCLUDED.type, blob = EXCLUDED.blob' : 'DO NOTHING'}
      )`;
  }

  override async deleteThread(threadId: string): Promise<void> {
    for (const key of [...this.latest.keys()]) if (key.startsWith(`${threadId}\u0000`)) this.latest.delete(key);
    await super.deleteThread(threadId);
  }

  // Drops every thread whose key starts with `prefix` from memory (PostgreSQL is not
  // touched): the gateway's part of deleting a tenant, whose threads are keyed
  // `<tenantId>:<threadId>`. The number dropped.
  forgetThreadsWithPrefix(prefix: string): number {
    let dropped = 0;
    for (const key of [...this.latest.keys()]) {
      if (key.startsWith(prefix)) {
        this.latest.delete(key);
        dropped++;
      }
    }
    return dropped;
  }

  // Stops the idle sweep (the pool is the caller's).
  close(): void {
    clearInterval(this.sweeper);
    this.sweeper = undefined;
  }

  private touch(key: string, entry: CachedLatest): void {
    entry.usedAt = this.now();
    this.latest.delete(key);
    this.latest.set(key, entry);
    while (this.latest.size > this.maxThreads) this.latest.delete(this.latest.keys().next().value as string);
    this.dropIdle();
  }

  // The map is in order of use, least recent first: drops from the front while idle.
  private dropIdle(): void {
    if (this.idleMs <= 0) return;
    const oldest = this.now() - this.idleMs;
    for (const [key, entry] of this.latest) {
      if ((entry.usedAt ?? 0) > oldest) return;
      this.latest.delete(key);
    }
  }

  private table(name: string): string {
    return `"${this.schema}".${name}`;
  }
}

// An INSERT's rows: `VALUES ...`, or with `condition` (SQL) the same rows only if it
// holds. In the subquery the rows' parameters are text unless cast.
function valuesWhere(rows: string[], condition?: string): string {
  return condition ? `SELECT * FROM (VALUES ${rows.join(', ')}) AS new_rows WHERE ${condition}` : `VALUES ${rows.join(', ')}`;
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
