// A run's last checkpoint write, handed to the statement that ends the run.
//
// Every run through the gateway ends with the release of its thread: one statement that
// commits and waits for its WAL flush before the run answers. A run with "exit"
// durability (the default) writes one checkpoint, just before that release; on its own it
// is a statement and a round trip more. A run whose `configurable` holds a carrier
// (CONFIG_CHECKPOINT_CARRIER) has CachedPostgresSaver hand the carrier its write instead,
// and the release runs it in its own statement: the checkpoint and the thread's release
// commit together or not at all, with one flush.
//
// The carrier holds one write, and only in runs with "exit" durability (`holds`): with
// "async" or "sync" LangGraph writes a checkpoint per step, and may start the next before
// the last has returned, so each goes out at once, on its own statement. Writes that do
// not go with the release (those, pending writes, a write held when another comes)
// commit without waiting for their own WAL flush: the release, which always follows and
// waits for its flush, covers them, as PostgreSQL flushes the WAL in order.
//
// A run writes its thread's state only while it holds the thread: every write of a run
// with a carrier (checkpoints and pending writes) lands only if the carrier's `onlyIf`
// holds (the thread is still claimed by this run), and the release stores the write it
// carries only if it released the thread. A run under way while its thread or its
// tenant was deleted, or whose thread a newer run took over (a stale claim), leaves
// nothing behind (ThreadNotHeldError).
export const CONFIG_CHECKPOINT_CARRIER = 'drydock_checkpoint_carrier';

// An SQL condition over parameters numbered from $first, in the order of `values`.
export interface WriteCondition {
  sql(first: number): string;
  readonly values: readonly unknown[];
}

// A checkpoint write of a run that no longer holds its thread: nothing was written.
export class ThreadNotHeldError extends Error {
  override readonly name = 'ThreadNotHeldError';
  constructor(threadId: string) {
    super(`the run no longer holds thread ${threadId} (deleted, or taken over by a newer run): its state was not saved`);
  }
}

export interface CarriedWrite {
  // The write as data-modifying CTEs (`name AS (INSERT ...), ...`), its parameters
  // numbered from $first, in the order of `values`; with `condition` (SQL), its rows are
  // inserted only if it holds.
  ctes(first: number, condition?: string): string;
  readonly values: readonly unknown[];
  // Names the statement's text: writes of the same shape give the same text.
  readonly shape: string;
  // Called once the statement that carried the write has committed.
  committed(): void;
}

interface Held {
  write: CarriedWrite;
  runAlone: () => Promise<void>;
}

export class CheckpointCarrier {
  private held: Held | undefined;

  // `holds`: the run's checkpoint writes are held for its release ("exit" durability);
  // otherwise each goes out at once. `onlyIf`: what must hold for any of them to land on
  // its own statement (the run still holds its thread).
  constructor(
    readonly holds: boolean,
    readonly onlyIf?: WriteCondition,
  ) {}

  // Holds `write` for the release. `runAlone` runs it on its own statement (committing
  // without waiting for its flush), should another write come first.
  async hold(write: CarriedWrite, runAlone: () => Promise<void>): Promise<void> {
    await this.runHeld();
    this.held = { write, runAlone };
  }

  // Runs the write held, if any, on its own statement: before a write that must come
  // after it.
  async runHeld(): Promise<void> {
    const held = this.held;
    if (!held) return;
    this.held = undefined;
    await held.runAlone();
    held.write.committed();
  }

  // The write held, for the release's statement, which then calls its committed().
  take(): CarriedWrite | undefined {
    const write = this.held?.write;
    this.held = undefined;
    return write;
  }
}

// `config` with `carrier` in its configurable: how a run or a state update hands the
// checkpointer its carrier.
export function withCheckpointCarrier<C extends { configurable?: Record<string, unknown> }>(config: C, carrier: CheckpointCarrier): C {
  return { ...config, configurable: { ...config.configurable, [CONFIG_CHECKPOINT_CARRIER]: carrier } };
}

// The carrier in a run's configurable, if it has one.
export function checkpointCarrierOf(configurable: Record<string, unknown> | undefined): CheckpointCarrier | undefined {
  const carrier = configurable?.[CONFIG_CHECKPOINT_CARRIER];
  return carrier instanceof CheckpointCarrier ? carrier : undefined;
}
