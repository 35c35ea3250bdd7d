import type { CarriedWrite, LatestCheckpoint, WriteCondition } from '@drydock/agents';

export type AgentThreadStatus = 'idle' | 'busy' | 'error';

// One LangGraph thread of one tenant. The conversation itself lives in the agent's
// checkpointer; this row is what the LangGraph API lists, owns and locks.
export interface AgentThreadRecord {
  tenantId: string;
  threadId: string;
  metadata: Record<string, unknown>;
  status: AgentThreadStatus;
  // The run holding the thread while status is busy.
  runId: string | null;
  // The last run's failure, while status is error.
  error: { code: string; message: string } | null;
  createdAt: Date;
  updatedAt: Date;
}

// A claimed thread. `latestCheckpoint` is set when the claim read it: only when the
// thread was not busy and nothing changed its row between the statement's snapshot and
// its update, so every run that held it before had released it, after its checkpoint
// writes, before the snapshot (a takeover of a stale run does not read it).
export interface ClaimedThread extends AgentThreadRecord {
  latestCheckpoint?: LatestCheckpoint;
}

export interface AgentThreadSearch {
  ids?: string[];
  status?: AgentThreadStatus;
  // Containment (jsonb @>): every key/value given must be in the thread's metadata.
  metadata?: Record<string, unknown>;
  sortBy: 'thread_id' | 'status' | 'created_at' | 'updated_at';
  sortOrder: 'asc' | 'desc';
  limit: number;
  offset: number;
}

export interface AgentThreadsRepository {
  // Inserts the thread; `created: false` with the existing row when the id is taken.
  create(tenantId: string, threadId: string, metadata: Record<string, unknown>): Promise<{ record: AgentThreadRecord; created: boolean }>;
  find(tenantId: string, threadId: string): Promise<AgentThreadRecord | null>;
  // Shallow-merges `metadata` into the thread's; null when there is no such thread.
  mergeMetadata(tenantId: string, threadId: string, metadata: Record<string, unknown>): Promise<AgentThreadRecord | null>;
  search(tenantId: string, query: AgentThreadSearch): Promise<AgentThreadRecord[]>;
  count(tenantId: string, query: Pick<AgentThreadSearch, 'status' | 'metadata'>): Promise<number>;
  // Marks the thread busy for `runId` unless another run holds it with a heartbeat newer
  // than `staleAfterMs` (a gateway that died mid-run does not lock a thread for ever).
  // The thread as claimed (busy, held by `runId`), 'busy', or 'missing' when the thread
  // does not exist.
  // With `checkpointThread` (the checkpointer's key for the thread), a claim that finds the
  // thread not busy also reads its latest checkpoint in the same statement, after every
  // earlier run's writes (see ClaimedThread).
  claim(
    tenantId: string,
    threadId: string,
    runId: string,
    staleAfterMs: number,
    checkpointThread?: string,
  ): Promise<ClaimedThread | 'busy' | 'missing'>;
  // Renews `runId`'s hold on the thread. Whether the run still holds it: false when the
  // thread was deleted or a newer run took it over.
  heartbeat(tenantId: string, threadId: string, runId: string): Promise<boolean>;
  // Ends `runId`'s hold on the thread: idle, or error with why. The run's last
  // checkpoint write, when its carrier held one, commits in the same statement, only if
  // the run still held the thread (its committed() is called after). Whether it did:
  // false when the thread was deleted or taken over meanwhile, and nothing was written.
  release(tenantId: string, threadId: string, runId: string, error: AgentThreadRecord['error'], carried?: CarriedWrite): Promise<boolean>;
  // The condition "`runId` holds the thread", for the run's other checkpoint writes
  // (CheckpointCarrier's onlyIf).
  heldBy(tenantId: string, threadId: string, runId: string): WriteCondition;
  delete(tenantId: string, threadId: string, runId: string): Promise<void>;
  // Deletes every thread of the tenant, held or not (its deletion); how many. A run
  // under way on one of them writes nothing more (release, heldBy).
  deleteAllOf(tenantId: string): Promise<number>;
}

export const AGENT_THREADS_REPOSITORY = Symbol('AGENT_THREADS_REPOSITORY');
