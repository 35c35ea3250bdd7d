import type { SandboxTier } from '@drydock/core';
import type { SessionNetwork } from '../queue/queue.constants.js';
import type {
  ArtifactListing,
  CommandSpec,
  DoneFrame,
  FsDeletedEvent,
  FsWrittenEvent,
  RecycledEvent,
  RichResult,
  SessionChangeReport,
  SkipReason,
  TerminalEvent,
} from '../protocol/repl-protocol.js';

// Limits applied to one session's container, after clamping to the tenant's maxima.
export interface EffectiveLimits {
  memoryMb: number;
  cpus: number;
  timeoutMs: number;
  pids: number;
  sessionDiskMb: number;
  tmpDiskMb: number;
  maxOutputBytes: number;
}

export interface SandboxSpec {
  sessionId: string;
  tenantId: string;
  threadId: string;
  workerId: string;
  limits: EffectiveLimits;
  // `bind`: /session is a host folder of this session under the operator's
  // SESSION_BIND_DIR (kept across container restarts, removed when the session ends).
  storage?: 'tmpfs' | 'bind';
  // Operator dataset folders (already resolved and confined) mounted read-only at
  // /data/<name>.
  readOnlyMounts?: { name: string; hostPath: string }[];
  // A template's image (in the registry, by digest) instead of the platform's own; the
  // runtime pulls it the first time this host needs it.
  image?: string;
  // A network policy (docs/network.md): the sandbox gets the egress proxy's socket and a
  // forwarder on its loopback (HTTP_PROXY); absent: no network at all.
  network?: SessionNetwork;
  // A batch's sandbox (sessionId is then only its key): the batch and the item it serves
  // first, for the egress log (recycled for a later item, the pool says which).
  batch?: { batchId: string; item: number };
  // The isolation tier (docs/sessions.md); absent: runc.
  tier?: SandboxTier;
}

// A sandbox saved by a checkpoint, on this worker's disk: gVisor's image of its memory,
// its processes and its in-memory folders (/session, /tmp). Removed by `remove`.
// The sandbox cannot be checkpointed now (a run is in progress, a terminal is open, the
// runtime failed): it runs on as it was.
export class CheckpointRefusedError extends Error {}

export interface SandboxCheckpointFile {
  path: string;
  sizeBytes: number;
  remove(): Promise<void>;
}

// `code` for the REPL, or a `command` to run as a process beside it.
export interface RunRequest {
  id: string;
  code: string;
  command?: CommandSpec;
  timeoutMs: number;
  maxOutputBytes: number;
}

// What one run produced: the REPL's done frame without its envelope. `stateLost` says
// the interpreter's variables were lost before this run started.
export type RunOutcome = Omit<DoneFrame, 'ev' | 'id' | 'artifacts' | 'figures' | 'trackingMs'> & {
  artifacts: ArtifactListing;
  figures: string[];
  // For benchmarks; not recorded.
  trackingMs?: number;
};

// A file to place under /session; `path` is relative to /session with a leading slash.
export interface SessionFileIn {
  path: string;
  content: Buffer;
  modifiedAt: Date;
}

// Why a changed path was not read back: the report's reasons, or what the archive
// showed by the time it was read (the code may still be running in the background).
// `changing`: the file grew or shrank while its bytes were sent (code still writing it).
export type ReadSkipReason = SkipReason | 'directory' | 'too-large' | 'vanished' | 'invalid-path' | 'changing';

// One path asked of readFiles: its bytes, or why it was not read.
export type SessionFileRead = { path: string; content: Buffer } | { path: string; skipped: ReadSkipReason };

// What a file's stream (SessionTreeEntry.content) fails with when the sandbox sent it
// with fewer or more bytes than it announced: the file was being written while it was
// read (code running in the background), and the bytes are not the file's. The entries
// after it still arrive.
export class SandboxFileChangedError extends Error {
  constructor(readonly path: string) {
    super(`${path} changed while it was read`);
    this.name = 'SandboxFileChangedError';
  }
}

// An entry of exportFiles: a regular file with a stream of its bytes (read it or leave
// it; the rest is dropped), or another kind, named by the reason it is not read.
export interface SessionTreeEntry {
  path: string;
  kind: 'file' | ReadSkipReason;
  size: number;
  content: NodeJS.ReadableStream;
}

export type FsDeleteOutcome = Omit<FsDeletedEvent, 'ev' | 'id'>;

// What putFiles did: files put in place, and the paths it refused (untouched) with why.
export type FsWriteOutcome = Omit<FsWrittenEvent, 'ev' | 'id'>;

export type RecycleOutcome = Omit<RecycledEvent, 'ev' | 'id'>;

export type OutputListener = (name: 'stdout' | 'stderr', text: string) => void;

// What a background process sends its host: a chunk of output while it is watched, and
// its end (`lost`: the sandbox went with it, so the exit status is unknown).
export type ProcessEvent =
  | { kind: 'chunk'; processId: string; seq: number; name: 'stdout' | 'stderr'; text: string }
  | {
      kind: 'exit';
      processId: string;
      exitCode: number | null;
      signal: string | null;
      durationMs: number;
      stdout: string;
      stderr: string;
      truncated: boolean;
      lost?: string;
    };

// The kept output of a background process after chunk `after`: [seq, stream, text]
// chunks, the oldest kept (`first`; older ones were dropped), and its exit once it ended.
export interface ProcessOutput {
  known: boolean;
  chunks: [number, 'stdout' | 'stderr', string][];
  first: number;
  exit: { exitCode: number | null; signal: string | null } | null;
}

export type ProcessSignal = 'SIGINT' | 'SIGTERM' | 'SIGKILL' | 'SIGHUP';

// Why a background process did not start: `limit` (too many run in the sandbox),
// `exists`, `spawn` (the program or its cwd), `unsupported` (an older image).
export class ProcessRefusedError extends Error {
  constructor(
    readonly reason: 'limit' | 'exists' | 'spawn' | 'unsupported',
    message: string,
  ) {
    super(message);
    this.name = 'ProcessRefusedError';
  }
}

// Background processes of one sandbox (commands started with `background: true`). They
// run beside runs; none of these calls waits for one.
export interface SandboxProcesses {
  start(processId: string, command: CommandSpec): Promise<{ pid: number }>;
  // The kept output after `after`; with `watch`, each new chunk comes as an event after.
  read(processId: string, after: number, watch: boolean): Promise<ProcessOutput>;
  unwatch(processId: string): void;
  writeStdin(processId: string, data: Buffer, eof: boolean): Promise<{ accepted: number; refused: string | null }>;
  signal(processId: string, signal: ProcessSignal): Promise<boolean>;
  // Ids of the processes that have not ended.
  running(): string[];
  // Processes this sandbox was restored with (a checkpoint keeps them running): known
  // as running here, so their exits and the sandbox's end are reported for them.
  adopt(processIds: readonly string[]): void;
  // Returns the unsubscribe.
  onEvent(listener: (event: ProcessEvent) => void): () => void;
}

// What a terminal of a sandbox reports: what it shows, as it comes, and its end (`lost`
// when it ended with its sandbox).
export type SandboxTerminalEvent =
  | { kind: 'output'; terminalId: string; data: Buffer }
  | { kind: 'exit'; terminalId: string; exitCode: number | null; signal: string | null; lost?: string };

// A terminal's window, in characters (1-1000 each).
export interface TerminalSize {
  cols: number;
  rows: number;
}

// Why a terminal did not open: `limit` (4 are open in the sandbox), `exists`, `invalid`
// (its size), `spawn` (the shell could not start).
export class TerminalRefusedError extends Error {
  constructor(
    readonly reason: Extract<TerminalEvent, { ev: 'pty-refused' }>['reason'],
    message: string,
  ) {
    super(message);
    this.name = 'TerminalRefusedError';
  }
}

// Interactive shells of one sandbox, each on a pseudo-terminal of its own (the
// supervisor's terminals.py). They run beside runs; none of these calls waits for one.
export interface SandboxTerminals {
  open(terminalId: string, size: TerminalSize): Promise<{ pid: number }>;
  // Typed bytes, a new window size, a hang-up (SIGHUP to the shell's session, or with
  // `force` SIGKILL to all of it; its exit event follows). Fire and forget, in order.
  input(terminalId: string, data: Buffer): void;
  resize(terminalId: string, size: TerminalSize): void;
  close(terminalId: string, force?: boolean): void;
  // Returns the unsubscribe.
  onEvent(listener: (event: SandboxTerminalEvent) => void): () => void;
}

// One live sandbox (container + REPL). Runs are serialised by the caller.
export interface Sandbox {
  readonly id: string;
  readonly alive: boolean;
  // Background processes, when the sandbox's supervisor can run them.
  readonly processes?: SandboxProcesses;
  // Terminals, when the sandbox's supervisor can open them.
  readonly terminals?: SandboxTerminals;
  run(request: RunRequest, onOutput?: OutputListener): Promise<RunOutcome>;
  // Asks the run `runId`, if it is the one in progress, to stop: its `run` then ends as
  // the code did (usually status `error`, a KeyboardInterrupt), or `killed` with a new
  // interpreter if the code ignores it. False when that run is not in progress or the
  // sandbox's image cannot interrupt (the run then goes on to its time limit).
  interrupt(runId: string): boolean;
  // Writes files into /session, creating missing parent directories; everything is
  // owned by the sandbox user. Replaces what is at each path, a symlink included, but
  // never follows one: a path with a symlink (or a file) where a folder would be, or a
  // folder at the path itself, is refused and left as it is. Written inside the
  // container by the supervisor (fs-write), never by the engine from the host. Must not
  // overlap a run.
  putFiles(files: SessionFileIn[]): Promise<FsWriteOutcome>;
  // Reads regular files back from /session (as exportFiles does), never following a
  // symlink and never reading a host path; anything else, or a file over
  // `maxFileBytes`, comes back as skipped. Yields each asked path once.
  readFiles(paths: string[], options: { maxFileBytes: number }): AsyncIterable<SessionFileRead>;
  // Unlinks files (or symlinks) under /session without following symlinks; not
  // directories. Must not overlap a run.
  deleteFiles(paths: string[]): Promise<FsDeleteOutcome>;
  // Streams regular files of /session out of the container, each asked path once and in
  // that order: over the host channel from a supervisor that knows fs-read (decision
  // 013), else out of a Docker archive. Never follows a symlink nor reads a host path;
  // anything else, a file over `maxFileBytes` or a path gone comes back with its reason.
  exportFiles(paths: string[], options: { maxFileBytes: number }): AsyncIterable<SessionTreeEntry>;
  // Makes the sandbox as new for another one-shot run of the same owner (batch items):
  // every process of the sandbox user killed, /session, /tmp, /dev/shm and /dev/mqueue
  // emptied, System V IPC removed, a fresh interpreter; then checks it. Not clean (or a
  // supervisor that cannot recycle): the caller must destroy the sandbox. Not during a run.
  recycle(): Promise<RecycleOutcome>;
  // Every file of /session as a change report from nothing (a session forked from a
  // snapshot reads its files into its new thread with it); absent where the sandbox's
  // supervisor cannot list them.
  listFiles?(): Promise<SessionChangeReport>;
  destroy(): Promise<void>;
}

export interface SandboxRuntime {
  // A new sandbox, or with `restoreFrom` the sandbox a checkpoint file saved (its
  // processes go on; the spec must be the one it was checkpointed with).
  create(spec: SandboxSpec, options?: { restoreFrom?: string }): Promise<Sandbox>;
  // Why sandboxes of this spec cannot be checkpointed here; null when they can.
  checkpointUnavailable(spec: Pick<SandboxSpec, 'tier' | 'storage'>): string | null;
  // Saves the sandbox, between runs, to a file and removes its container. Throws
  // CheckpointRefusedError when it cannot now: the sandbox then runs on as it was.
  checkpoint(sandbox: Sandbox): Promise<SandboxCheckpointFile>;
  // Frees what a session kept beyond its containers (its `bind` folder); idempotent.
  releaseSession(sessionId: string): Promise<void>;
  // Removes containers labelled for this worker whose session is not in `keep`.
  removeOrphans(workerId: string, keep: ReadonlySet<string>): Promise<number>;
  // The workers that have sandbox containers on this engine, each with its newest
  // container's creation time (ms since the epoch).
  sandboxWorkers(): Promise<{ workerId: string; newestCreatedAt: number }[]>;
  // Whether the container engine answers, within timeoutMs (the runtime's default).
  healthy(timeoutMs?: number): Promise<boolean>;
}

export const SANDBOX_RUNTIME = Symbol('SANDBOX_RUNTIME');

export function outcomeFromDone(done: DoneFrame): RunOutcome {
  return {
    status: done.status,
    stdout: done.stdout,
    stderr: done.stderr,
    truncated: done.truncated,
    result: compactResult(done.result),
    error: done.error,
    stateLost: done.stateLost,
    durationMs: done.durationMs,
    cpuMs: done.cpuMs ?? null,
    files: done.files ?? emptyChangeReport(),
    artifacts: done.artifacts ?? { files: [], skipped: [] },
    figures: done.figures ?? [],
    trackingMs: done.trackingMs,
    ...(done.exitCode !== undefined ? { exitCode: done.exitCode, signal: done.signal ?? null } : {}),
  };
}

// The REPL reports absent representations as null; the API omits them.
function compactResult(result: RichResult | null): RichResult | null {
  if (!result) return null;
  const compact: RichResult = {};
  for (const [key, value] of Object.entries(result)) {
    if (value !== null && value !== undefined) (compact as Record<string, unknown>)[key] = value;
  }
  return Object.keys(compact).length ? compact : null;
}

export function emptyChangeReport(): RunOutcome['files'] {
  return { changed: [], deleted: [], skipped: [] };
}
