import type { ExecutionRecord } from './executions.repository.js';

// The public shape of an execution (API.md). The stored code is not echoed back.
export interface ExecutionView {
  id: string;
  sessionId: string;
  threadId: string;
  // `code` (Python in the REPL) or `command` (a process, POST .../commands).
  kind: ExecutionRecord['kind'];
  status: ExecutionRecord['status'];
  // Commands only: the exit status, or the signal that ended the process ("SIGKILL");
  // both null when the platform ended it (timeout, memory) or it never started.
  exitCode?: number | null;
  signal?: string | null;
  // Background processes only: the pid it got in the sandbox.
  pid?: number | null;
  stdout: string;
  stderr: string;
  truncated: boolean;
  result: ExecutionRecord['result'];
  error: ExecutionRecord['error'];
  stateLost: boolean;
  files: ExecutionRecord['files'];
  artifacts: unknown[];
  artifactsSkipped: { path: string; reason: string }[];
  codeSha256: string;
  idempotencyKey: string | null;
  durationMs: number | null;
  // CPU time of the sandbox while the code ran (its cgroup's counter); null when unknown.
  cpuMs: number | null;
  // Present when the run first resumed its hibernated session: how long that took.
  resumedMs?: number;
  // Present when stateLost and the platform knows why (a checkpoint not restored).
  stateLostReason?: string;
  createdAt: string;
  finishedAt: string | null;
}

export function toExecutionView(record: ExecutionRecord): ExecutionView {
  return {
    id: record.id,
    sessionId: record.sessionId,
    threadId: record.threadId,
    kind: record.kind ?? 'code',
    status: record.status,
    ...(record.kind === 'command' ? { exitCode: record.exitCode ?? null, signal: record.signal ?? null } : {}),
    ...(record.background ? { pid: record.pid ?? null } : {}),
    stdout: record.stdout,
    stderr: record.stderr,
    truncated: record.truncated,
    result: record.result,
    error: record.error,
    stateLost: record.stateLost,
    // Rows written before `skipped` existed lack it.
    files: { ...record.files, skipped: record.files.skipped ?? [] },
    artifacts: record.artifacts,
    artifactsSkipped: record.artifactsSkipped ?? [],
    codeSha256: record.codeSha256,
    idempotencyKey: record.idempotencyKey,
    durationMs: record.durationMs,
    cpuMs: record.cpuMs ?? null,
    ...(record.resumedMs != null ? { resumedMs: record.resumedMs } : {}),
    ...(record.stateLostReason ? { stateLostReason: record.stateLostReason } : {}),
    createdAt: new Date(record.createdAt).toISOString(),
    finishedAt: record.finishedAt ? new Date(record.finishedAt).toISOString() : null,
  };
}
