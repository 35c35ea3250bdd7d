import type { ExecutionStatus, PythonError, RichResult } from '@drydock/execution';
import type { GrepOptions, GrepResult, VfsEntry } from '@drydock/vfs';

// The storage surface behind the agent's file tools (ls, read_file, write_file, edit_file,
// glob, grep, delete_file). One backend instance serves every tenant and thread at once:
// tools are built once at start-up, so each call carries its own context.
//
// Results are typed values, not model-facing text; failures are thrown as typed errors
// (VfsError with the VFS codes, BackendError for what only backends can refuse) and the
// tool layer renders both as text the model can act on.

// A file as LangGraph state holds it (the DeepAgents FileData shape). `content` is the
// text split on `\n` (joining with `\n` gives it back exactly); a plain string is read too.
export interface StateFileData {
  content: string[] | string;
  created_at?: string;
  modified_at: string;
}

export type StateFiles = Record<string, StateFileData>;
// What a state-backed write hands back for the graph to merge: a value adds or replaces
// the file, null deletes it (see mergeStateFiles).
export type StateFilesUpdate = Record<string, StateFileData | null>;

export interface BackendContext {
  tenantId: string;
  threadId: string;
  // The graph state's `files` as the tool saw it; only the state backend reads it.
  stateFiles?: Readonly<StateFiles>;
  // The template the thread's session starts from (the agent definition's); absent:
  // the platform image.
  template?: string | null;
  // The hosts the code of the thread's session may reach (the agent definition's, asked
  // when the session is created); absent: no network.
  network?: { allow: string[] } | null;
  // The isolation tier of the thread's session (the agent definition's, asked when the
  // session is created); absent: the tenant's default.
  tier?: 'runc' | 'gvisor' | null;
  // What the thread's session comes to when idle (the agent definition's, asked when the
  // session is created); absent: the deployment's SESSION_IDLE_ACTION.
  idleAction?: 'hibernate' | 'end' | null;
}

// A directory listing entry (absolute path, `file` or `directory`).
export type BackendEntry = VfsEntry;

export interface ReadOptions {
  // 0-based line to start at (default 0).
  offset?: number;
  // Lines to return (default 500).
  limit?: number;
}

export type ReadResult =
  | {
      kind: 'text';
      path: string;
      offset: number;
      // The raw lines shown (trailing `\r` removed), and the same window as `cat -n`
      // text, long lines split into continuation rows (the VFS read format).
      lines: string[];
      numbered: string;
      totalLines: number;
      // True when lines remain after this window.
      more: boolean;
    }
  | { kind: 'empty'; path: string }
  | { kind: 'binary'; path: string; contentType: string; size: number }
  | { kind: 'past_end'; path: string; offset: number; totalLines: number };

export interface WriteOptions {
  // Default true; false refuses an existing file with FILE_EXISTS (write_file's
  // "create a new file" mode).
  overwrite?: boolean;
}

export interface WriteResult {
  path: string;
  created: boolean;
  size: number;
  // Only from state-backed storage: merge into the graph's `files`.
  filesUpdate?: StateFilesUpdate;
}

export interface EditResult {
  path: string;
  occurrences: number;
  filesUpdate?: StateFilesUpdate;
}

export interface DeleteResult {
  deleted: string[];
  filesUpdate?: StateFilesUpdate;
}

export type BackendGrepOptions = GrepOptions;
export type { GrepResult };

export interface Backend {
  // Direct children of a directory (a file path lists that file alone). FILE_NOT_FOUND
  // when nothing is there.
  ls(ctx: BackendContext, path: string): Promise<BackendEntry[]>;
  read(ctx: BackendContext, path: string, options?: ReadOptions): Promise<ReadResult>;
  write(ctx: BackendContext, path: string, content: string, options?: WriteOptions): Promise<WriteResult>;
  // Exact-string replacement: STRING_NOT_FOUND when absent, AMBIGUOUS_MATCH when it
  // occurs more than once and replaceAll is false.
  edit(ctx: BackendContext, path: string, oldString: string, newString: string, replaceAll?: boolean): Promise<EditResult>;
  // Literal by default (`regex: true` for a JavaScript regular expression); files,
  // matching lines or counts per `outputMode`. Paths are absolute.
  grep(ctx: BackendContext, pattern: string, options?: BackendGrepOptions): Promise<GrepResult>;
  // Absolute paths of files matching a glob relative to `path` (or absolute when the
  // pattern starts with `/`), sorted.
  glob(ctx: BackendContext, pattern: string, path?: string): Promise<string[]>;
  // A file, or a directory and everything beneath it.
  delete(ctx: BackendContext, path: string): Promise<DeleteResult>;
}

// How a run in the thread's sandbox is asked for: a shell command (`execute`) or
// Python (`executePython`).
export interface ExecuteOptions {
  // Makes a retried call return the stored result instead of running twice (an agent
  // passes its tool_call_id).
  idempotencyKey?: string;
  timeoutMs?: number;
  // The run's signal: aborting it (a cancelled run) interrupts the code, which then
  // ends as on a KeyboardInterrupt (a command: its process group is stopped); the call
  // still answers with how it ended.
  signal?: AbortSignal;
}

// A shell command's outcome (seed 004's execute response): the combined output and the
// exit code. `status` is "ok" iff it exited 0, "error" for another exit or a signal,
// and "timeout", "memory" or "killed" when the platform stopped it.
export interface CommandResult {
  status: ExecutionStatus;
  // What it wrote to stdout, then what it wrote to stderr (the sandbox keeps the two
  // apart, so they are not interleaved).
  output: string;
  // Null when a signal ended it, or the platform did.
  exitCode: number | null;
  // The signal that ended it ("SIGKILL"), when one did.
  signal: string | null;
  // The output cap dropped the rest.
  truncated: boolean;
  durationMs?: number | null;
  executionId?: string;
  files?: { changed: string[]; deleted: string[] };
  artifacts?: Array<{ id: string; path?: string; name?: string; mime?: string; size?: number }>;
}

// A Python run's outcome.
export interface ExecuteResult {
  status: ExecutionStatus;
  stdout: string;
  stderr: string;
  truncated: boolean;
  result?: RichResult | null;
  error?: PythonError | null;
  // The Python variables were lost (the session was re-created) before this run.
  stateLost?: boolean;
  executionId?: string;
  // Thread files the run changed or deleted (absolute VFS paths).
  files?: { changed: string[]; deleted: string[] };
  // Artifacts the run produced under /session/artifacts/ (the REST descriptors:
  // id, path, name, mime, size, ...).
  artifacts?: Array<{ id: string; path?: string; name?: string; mime?: string; size?: number }>;
}

// A backend whose files are also visible to what it runs (the thread's sandbox).
export interface SandboxBackend extends Backend {
  // Seed 004's execute: a shell command, run by /bin/bash -c in /session, beside the
  // Python session (whose variables it never touches).
  execute(ctx: BackendContext, command: string, options?: ExecuteOptions): Promise<CommandResult>;
  // Python in the thread's persistent session: execute_python, python_run_prepared and
  // the Python tool modules.
  executePython(ctx: BackendContext, code: string, options?: ExecuteOptions): Promise<ExecuteResult>;
}

export function isSandboxBackend(backend: Backend): backend is SandboxBackend {
  const sandbox = backend as Partial<SandboxBackend>;
  return typeof sandbox.execute === 'function' && typeof sandbox.executePython === 'function';
}
