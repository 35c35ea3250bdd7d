import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';
import type { PythonError, RichResult } from '../protocol/repl-protocol.js';

// `code`: Python run in the session's REPL; `command`: a process (POST .../commands).
export type ExecutionKind = 'code' | 'command';

export type ExecutionRecordStatus = 'queued' | 'running' | 'ok' | 'error' | 'timeout' | 'memory' | 'killed';

// What the run did to the thread's files (paths as the Files API names them): files
// written back to the thread, files deleted from it, and paths under /session that were
// not mirrored, with why (a symlink, a file over the size limit, ...). `truncated`: the
// session held more entries than one change report covers.
export interface ExecutionFiles {
  changed: string[];
  deleted: string[];
  skipped: { path: string; reason: string }[];
  truncated?: boolean;
}

@Entity({ name: 'executions' })
@Index('executions_tenant_session_idx', ['tenantId', 'sessionId', 'createdAt'])
export class ExecutionEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'tenant_id', type: 'text' })
  tenantId: string;

  @Column({ name: 'session_id', type: 'text' })
  sessionId: string;

  @Column({ name: 'thread_id', type: 'text' })
  threadId: string;

  @Column({ type: 'text', default: 'code' })
  kind: ExecutionKind;

  // Python source, or a command's canonical JSON (commands/command-spec.ts).
  @Column({ type: 'text' })
  code: string;

  @Column({ name: 'code_sha256', type: 'char', length: 64 })
  codeSha256: string;

  @Column({ type: 'text' })
  status: ExecutionRecordStatus;

  @Column({ type: 'text', default: '' })
  stdout: string;

  @Column({ type: 'text', default: '' })
  stderr: string;

  @Column({ type: 'boolean', default: false })
  truncated: boolean;

  // A command's exit status and the signal that ended it (null for Python runs, and for
  // a command that did not end by itself: its status says why).
  @Column({ name: 'exit_code', type: 'integer', nullable: true })
  exitCode: number | null;

  @Column({ type: 'text', nullable: true })
  signal: string | null;

  // A background process (a command started with `background: true`), and the pid it
  // got in the sandbox.
  @Column({ type: 'boolean', default: false })
  background: boolean;

  @Column({ type: 'integer', nullable: true })
  pid: number | null;

  @Column({ type: 'jsonb', nullable: true })
  result: RichResult | null;

  @Column({ type: 'jsonb', nullable: true })
  error: PythonError | null;

  @Column({ name: 'state_lost', type: 'boolean', default: false })
  stateLost: boolean;

  @Column({ type: 'jsonb', default: () => `'{"changed":[],"deleted":[]}'` })
  files: ExecutionFiles;

  @Column({ type: 'jsonb', default: () => "'[]'" })
  artifacts: unknown[];

  // Entries of /session/artifacts/ the run left that were not stored, with why.
  @Column({ name: 'artifacts_skipped', type: 'jsonb', default: () => "'[]'" })
  artifactsSkipped: { path: string; reason: string }[];

  @Column({ name: 'idempotency_key', type: 'text', nullable: true })
  idempotencyKey: string | null;

  @Column({ name: 'timeout_ms', type: 'integer' })
  timeoutMs: number;

  @Column({ name: 'duration_ms', type: 'integer', nullable: true })
  durationMs: number | null;

  // CPU time of the sandbox while the code ran (its cgroup's counter), for usage.
  @Column({ name: 'cpu_ms', type: 'double precision', nullable: true })
  cpuMs: number | null;

  // The run first resumed its hibernated session (a restore), in this many ms.
  @Column({ name: 'resumed_ms', type: 'integer', nullable: true })
  resumedMs: number | null;

  @Column({ name: 'state_lost_reason', type: 'text', nullable: true })
  stateLostReason: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'started_at', type: 'timestamptz', nullable: true })
  startedAt: Date | null;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;
}
