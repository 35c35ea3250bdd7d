// The framed protocol spoken with the REPL supervisor over the container's attached
// stdin/stdout (see docker/sandbox/repl/README.md): a 4-byte big-endian length, then
// that many bytes of UTF-8 JSON.
export const MAX_FRAME_BYTES = 64 * 1024 * 1024;

export type ExecutionStatus = 'ok' | 'error' | 'timeout' | 'memory' | 'killed';

// A process the supervisor starts as the sandbox user in a session and process group of
// its own (supervisors announcing the "commands" feature). `env` is added to the
// sandbox's environment; `stdin` is written to the process and then closed (without it,
// the process reads end of file).
export interface CommandSpec {
  argv: string[];
  cwd: string;
  env: Record<string, string>;
  stdin?: string;
}

// `code` runs in the REPL; with `command` instead, the exec is that process (its output
// is the process's, its `done` carries exitCode and signal), and the REPL is untouched.
export interface ExecRequest {
  op: 'exec';
  id: string;
  code?: string;
  command?: CommandSpec;
  // With `command`: start it as a background process (bg-started), not as this exec.
  background?: boolean;
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
  // A command's exit status, or the signal that ended it (e.g. "SIGKILL"); both null
  // when it never started or was ended by the platform (its status says why). Absent for
  // Python runs.
  exitCode?: number | null;
  signal?: string | null;
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

// Answer to an fs-write request, once every byte of it is in: how many files were put
// in place, and the paths refused with why (`symlink` on the way or swapped in,
// `not-a-directory`, `directory` at the path, `no-space`, `permission`, `invalid`,
// `busy`, `error`). A refused path was not touched.
export interface FsWrittenEvent {
  ev: 'fs-written';
  id: string;
  written: number;
  refused: { path: string; reason: string }[];
}

// Answer to an fs-read request, one per asked path and in their order: either the
// file's size, in which case exactly `size` raw bytes of it follow this frame on the
// channel (not a frame) and then `fs-file-end`; or why it was not read (`skipped`: a
// ReadSkipReason such as `symlink`, `hardlink`, `fifo`, `directory`, `too-large`,
// `vanished`, `invalid-path`, `unreadable`), and nothing follows.
export type FsFileEvent =
  | { ev: 'fs-file'; id: string; path: string; size: number }
  | { ev: 'fs-file'; id: string; path: string; skipped: string };

// After a file's bytes: `complete` false when the file changed size or failed to read
// while it was sent (the bytes were padded or cut to the size announced): discard them.
export interface FsFileEndEvent {
  ev: 'fs-file-end';
  id: string;
  path: string;
  complete: boolean;
}

// Background processes (supervisors announcing "background"): an exec with `command`
// and `background: true` starts one and is answered at once.
export interface BgStartedEvent {
  ev: 'bg-started';
  id: string;
  pid: number;
}
// `limit` (too many running in the session), `exists`, or `spawn` (it could not start).
export interface BgRefusedEvent {
  ev: 'bg-refused';
  id: string;
  reason: 'limit' | 'exists' | 'spawn';
  message: string;
}
// One chunk of output: numbered per process from 1, in order over both streams.
export type BgChunk = [seq: number, name: 'stdout' | 'stderr', text: string];
// Answer to bg-read: the kept chunks after `after` (`first`: the oldest kept; older ones
// were dropped from the bounded buffer), and the exit once it exited.
export interface BgOutputEvent {
  ev: 'bg-output';
  id: string;
  process: string;
  known: boolean;
  chunks: BgChunk[];
  first: number;
  exit: { exitCode: number | null; signal: string | null } | null;
}
// A chunk as it is read, while the host watches the process.
export interface BgChunkEvent {
  ev: 'bg-chunk';
  process: string;
  seq: number;
  name: 'stdout' | 'stderr';
  text: string;
}
// Sent for every background process that ends, with what is kept of its output.
export interface BgExitEvent {
  ev: 'bg-exit';
  process: string;
  exitCode: number | null;
  signal: string | null;
  durationMs: number;
  stdout: string;
  stderr: string;
  truncated: boolean;
}
// `refused`: `unknown`, `exited`, `closed` (stdin closed already), `full`, `invalid`.
export interface BgStdinDoneEvent {
  ev: 'bg-stdin-done';
  id: string;
  process: string;
  accepted: number;
  refused: string | null;
}
export interface BgSignalledEvent {
  ev: 'bg-signalled';
  id: string;
  process: string;
  delivered: boolean;
}

export type BackgroundEvent = BgStartedEvent | BgRefusedEvent | BgOutputEvent | BgChunkEvent | BgExitEvent | BgStdinDoneEvent | BgSignalledEvent;

// Terminals (supervisors announcing "terminals"): a login shell on a pty. Bytes are
// base64 both ways (`pty-input`, `pty-output`).
export type TerminalEvent =
  | { ev: 'pty-opened'; id: string; pid: number }
  | { ev: 'pty-refused'; id: string; reason: 'invalid' | 'exists' | 'limit' | 'spawn'; message: string }
  | { ev: 'pty-output'; id: string; data64: string }
  | { ev: 'pty-exit'; id: string; exitCode: number | null; signal: string | null };

export type ReplEvent =
  // `features`: optional requests this supervisor knows ("recycle", "fs-read",
  // "fs-write", "interrupt", "commands", "background", "terminals"); absent from older ones.
  // `resumed`: after a checkpoint (restored, or one that failed), on a new connection.
  | { ev: 'ready'; protocol: number; python: string; pid: number; features?: string[]; resumed?: boolean }
  // Answers to `checkpoint`: the supervisor closes its end of the channel after -ready.
  | { ev: 'checkpoint-ready'; id: string }
  // Answer to fs-list: every file of /session, as a change report from nothing.
  | { ev: 'fs-listed'; id: string; files: SessionChangeReport }
  | { ev: 'checkpoint-refused'; id: string; reason: string }
  | { ev: 'pong'; id: string }
  | { ev: 'stream'; id: string; name: 'stdout' | 'stderr'; text: string }
  | DoneFrame
  | FsDeletedEvent
  | FsWrittenEvent
  | RecycledEvent
  | FsFileEvent
  | FsFileEndEvent
  | BackgroundEvent
  | TerminalEvent
  | { ev: 'protocol_error'; message: string };

// Not a frame: raw bytes of the file the last `fs-file` announced, passed on by the
// decoder as they arrive (a subarray of the chunk read, not a copy).
export interface FsDataChunk {
  ev: 'fs-data';
  data: Buffer;
}

export type DecodedFrame = ReplEvent | FsDataChunk;

export type ReplRequest =
  | ExecRequest
  | { op: 'fs-delete'; id: string; paths: string[] }
  | { op: 'recycle'; id: string }
  // Between execs: the supervisor answers checkpoint-ready, closes the socket channel and
  // waits for the resume file in its folder (a checkpoint, decision 018).
  | { op: 'checkpoint'; id: string }
  | { op: 'fs-list'; id: string }
  // Stops the exec `id` if it is the one running (SIGINT, then a restarted kernel after
  // the grace); its `done` tells how it ended. No answer of its own.
  | { op: 'interrupt'; id: string }
  // Regular files of /session sent back raw (FsFileEvent); anything else, or a file over
  // maxBytes, refused unread.
  | { op: 'fs-read'; id: string; paths: string[]; maxBytes: number }
  // Files put in /session by the supervisor itself, never through a link (FsWrittenEvent):
  // exactly the sum of `size` raw bytes, the files' contents in order, follow this frame.
  | { op: 'fs-write'; id: string; files: { path: string; size: number; mtimeMs: number }[] }
  | { op: 'ping'; id: string }
  | { op: 'shutdown' }
  // Background processes (BackgroundEvent): the kept output after `after` (and, with
  // `watch`, each new chunk as bg-chunk until bg-unwatch or the exit); bytes for its
  // stdin (`eof` closes it); a signal to its process group.
  | { op: 'bg-read'; id: string; process: string; after: number; watch?: boolean }
  | { op: 'bg-unwatch'; process: string }
  | { op: 'bg-stdin'; id: string; process: string; data64: string; eof: boolean }
  | { op: 'bg-signal'; id: string; process: string; signal: 'SIGINT' | 'SIGTERM' | 'SIGKILL' | 'SIGHUP' }
  // Terminals (TerminalEvent): open one (cols and rows 1-1000), type into it, resize it,
  // hang it up (SIGHUP to its session; its pty-exit follows).
  | { op: 'pty-open'; id: string; cols: number; rows: number; cwd?: string; env?: Record<string, string> }
  | { op: 'pty-input'; id: string; data64: string }
  | { op: 'pty-resize'; id: string; cols: number; rows: number }
  // `force`: SIGKILL to every process of its session (a shell that ignores SIGHUP).
  | { op: 'pty-close'; id: string; force?: true };

export function encodeFrame(message: ReplRequest): Buffer {
  const body = Buffer.from(JSON.stringify(message), 'utf8');
  const header = Buffer.allocUnsafe(4);
  header.writeUInt32BE(body.length, 0);
  return Buffer.concat([header, body]);
}

export class FrameDecodeError extends Error {}

// Incremental decoder: feed it chunks as they arrive, get whole messages back, and the
// raw bytes that follow an `fs-file` frame as FsDataChunk items in their place.
export class FrameDecoder {
  private buffer: Buffer = Buffer.alloc(0);
  // Raw bytes still due after the last fs-file frame.
  private raw = 0;

  // A new connection starts on a frame boundary.
  reset(): void {
    this.buffer = Buffer.alloc(0);
    this.raw = 0;
  }

  push(chunk: Buffer): DecodedFrame[] {
    this.buffer = this.buffer.length ? Buffer.concat([this.buffer, chunk]) : chunk;
    const events: DecodedFrame[] = [];
    for (;;) {
      if (this.raw > 0) {
        if (this.buffer.length === 0) break;
        const take = Math.min(this.raw, this.buffer.length);
        events.push({ ev: 'fs-data', data: this.buffer.subarray(0, take) });
        this.buffer = this.buffer.subarray(take);
        this.raw -= take;
        continue;
      }
      if (this.buffer.length < 4) break;
      const length = this.buffer.readUInt32BE(0);
      if (length > MAX_FRAME_BYTES) throw new FrameDecodeError(`frame of ${length} bytes exceeds the limit`);
      if (this.buffer.length < 4 + length) break;
      const body = this.buffer.subarray(4, 4 + length).toString('utf8');
      this.buffer = this.buffer.subarray(4 + length);
      let event: ReplEvent;
      try {
        event = JSON.parse(body) as ReplEvent;
      } catch {
        throw new FrameDecodeError('frame is not valid JSON');
      }
      if (event.ev === 'fs-file' && 'size' in event) {
        if (!Number.isSafeInteger(event.size) || event.size < 0) throw new FrameDecodeError('fs-file has a bad size');
        this.raw = event.size;
      }
      events.push(event);
    }
    return events;
  }
}
