import type { Sandbox, SessionSpec } from '@drydock/execution';
import { newFileSyncState, type FileSyncState } from '../files/session-file-sync.js';

// One session this worker hosts: its spec (from the latest job), its sandbox when one
// is running, and what the next run must be told.
export interface HostedSession {
  spec: SessionSpec;
  sandbox: Sandbox | null;
  lastUsed: number;
  busy: boolean;
  // The next run must report that the interpreter's variables were lost.
  stateLostPending: boolean;
  // Runs of one session are strictly sequential (HostedSessionRegistry.serialize).
  tail: Promise<unknown>;
  // The file mirror of the current sandbox (reset with every new sandbox).
  files: FileSyncState | null;
  // A hibernated session: the checkpoint its sandbox is restored from (then null).
  resumeFrom: string | null;
  // How long the restore took, for the next run's record.
  resumedMsPending: number | null;
  // Why the next run's state is lost, when the platform knows (a failed restore).
  stateLostReason: string | null;
}

export function newHostedSession(spec: SessionSpec, options: { stateLost: boolean; resumeFrom?: string | null }): HostedSession {
  return {
    spec,
    sandbox: null,
    lastUsed: Date.now(),
    busy: false,
    stateLostPending: options.stateLost,
    tail: Promise.resolve(),
    files: null,
    resumeFrom: options.resumeFrom ?? null,
    resumedMsPending: null,
    stateLostReason: null,
  };
}

// The file mirror of this sandbox: a new sandbox starts with an empty one, so its first
// push copies every file of the thread.
export function fileStateOf(hosted: HostedSession, sandbox: Sandbox): FileSyncState {
  if (hosted.files?.sandboxId !== sandbox.id) hosted.files = newFileSyncState(sandbox.id);
  return hosted.files;
}

export function threadOf(spec: SessionSpec): { tenantId: string; threadId: string } {
  return { tenantId: spec.tenantId, threadId: spec.threadId };
}
