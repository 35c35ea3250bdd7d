// The framed protocol spoken with the REPL supervisor over the container's attached
// stdin/stdout (see docker/sandbox/repl/README.md): a 4-byte big-endian length, then
// that many bytes of UTF-8 JSON.
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

export type ExecutionStatus = 'ok' | 'error' | 'timeout' | 'memory' | 'killed';

export interface ExecRequest {
  op: 'exec';
  id: string;
  code: string;
  timeoutMs: number;
  maxOutputBytes: number;
  captureFigures?: boolean;
  // Nothing was put into /session from outside since the last done: the supervisor may
  // reuse that exec's snapshot instead of walking the tree again.
  sessionUnchanged?: boolean;
  // Whether the supervisor sends `stream` events while the code runs (default true).
  // False when nobody relays the output live: it then arrives only in `done`, one frame
  // per exec instead of one more per write the code makes.
  stream?: boolean;
}

export interface RichResult {
  text?: string;
  html?: string;
  png?: string;
  json?: unknown;
}

export interface PythonError {
  name: string;
  value: string;
  traceback: string;
}

// Why a path under /session was not reported as changed (see supervisor.py,
// diff_snapshots): not a regular file, a name that is not UTF-8, a directory that
// could not be listed.
export type SkipReason =
  | 'symlink'
  | 'hardlink'
  | 'fifo'
  | 'device'
  | 'socket'
  | 'other'
  | 'encoding'
  | 'unreadable';

// What one run did to /session outside /session/artifacts/: regular files created or
// modified, regular files gone, and what could not be mirrored. Paths are relative to
// /session with a leading slash ("/out/summary.csv"). `truncated`: the walk stopped at
// its entry limit, so the report is incomplete (and says nothing about deletes).
export interface SessionChangeReport {
  changed: string[];
  deleted: string[];
  skipped: { path: string; reason: SkipReason }[];
  truncated?: boolean;
}

// What /session/artifacts/ holds at the end of a run (not a diff): regular files with
// their sizes, and entries that are not (symlinks, hard links, FIFOs, ...).
export interface ArtifactListing {
  files: { path: string; size: number }[];
  skipped: { path: string; reason: SkipReason }[];
  truncated?: boolean;
}

export interface DoneFrame {
  ev: 'done';
  id: string;
  status: ExecutionStatus;
  stdout: string;
  stderr: string;
  truncated: boolean;
  result: RichResult | null;
  error: PythonError | null;
  stateLost: boolean;
  durationMs: number;
  // CPU time of the whole container (its cgroup's counter) while the code ran, in ms;
  // null when the supervisor could not read the counter or the code never ran. Absent
  // from supervisors older than usage metering.
  cpuMs?: number | null;
  files: SessionChangeReport;
  // Absent from supervisors older than the artifacts protocol.
  artifacts?: ArtifactListing;
  // Figures the kernel saved into /session/artifacts/ (already in `artifacts`).
  figures?: string[];
  // Time the supervisor spent on the change report (walks, diff, watch upkeep).
  trackingMs?: number;
}

// Answer to an fs-delete request: each path is deleted, missing, or refused with a
// reason (`directory`, `symlink` in the way, `busy`, `invalid`, ...).
export interface FsDeletedEvent {
  ev: 'fs-deleted';
  id: string;
  deleted: string[];
  missing: string[];
  refused: { path: string; reason: string }[];
}

// Answer to a recycle request: whether the sandbox is as new (no process of the sandbox
// user left, /session, /tmp, /dev/shm and /dev/mqueue empty, no System V IPC object, a
// fresh kernel), and what was found otherwise. Not clean: the caller destroys it.
export interface RecycledEvent {
  ev: 'recycled';
  id: string;
  clean: boolean;
  problems: string[];
  durationMs: number;
}

export type ReplEvent =
  // `features`: optional requests this supervisor knows (e.g. "recycle"); absent from
  // older ones.
  | { ev: 'ready'; protocol: number; python: string; pid: number; features?: string[] }
  | { ev: 'pong'; id: string }
  | { ev: 'stream'; id: string; name: 'stdout' | 'stderr'; text: string }
  | DoneFrame
  | FsDeletedEvent
  | RecycledEvent
  | { ev: 'protocol_error'; message: string };

export type ReplRequest =
  | ExecRequest
  | { op: 'fs-delete'; id: string; paths: string[] }
  | { op: 'recycle'; id: string }
  | { op: 'ping'; id: string }
  | { op: 'shutdown' };

export function encodeFrame(message: ReplRequest): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  const header = Buffer.allocUnsafe(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body]);
}

export class FrameDecodeError extends Error {}

// Incremental decoder: feed it chunks as they arrive, get whole messages back.
export class FrameDecoder {
  private buffer: Buffer = Buffer.alloc(0);

  push(chunk: Buffer): ReplEvent[] {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    const events: ReplEvent[] = [];
    while (this.buffer.length >= 4) {
      const length = this.buffer.readUInt32BE(0);
      if (length > MAX_FRAME_BYTES) throw new FrameDecodeError(`frame of ${length} bytes exceeds the limit`);
      if (this.buffer.length < 4 + length) break;
      const body = this.buffer.subarray(4, 4 + length).toString('utf8');
      this.buffer = this.buffer.subarray(4 + length);
      try {
        events.push(JSON.parse(body) as ReplEvent);
      } catch {
        throw new FrameDecodeError('frame is not valid JSON');
      }
    }
    return events;
  }
}
