import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';
import type { ExecutionView, PythonError, RichResult } from '@drydock/execution';

// The execution record (API.md "Executions"), for the OpenAPI document. It implements
// the view the routes return, so the compiler keeps the two in step.

export class RichResultResponse implements RichResult {
  @ApiPropertyOptional({ description: 'repr() of the last expression.' }) text?: string;
  @ApiPropertyOptional() html?: string;
  @ApiPropertyOptional({ description: 'A base64 PNG (e.g. a matplotlib figure).' }) png?: string;
  @ApiPropertyOptional({ description: 'Any JSON value.' }) json?: unknown;
}

export class PythonErrorResponse implements PythonError {
  @ApiProperty({ example: 'ZeroDivisionError' }) name: string;
  @ApiProperty({ example: 'division by zero' }) value: string;
  @ApiProperty() traceback: string;
}

export class SkippedPathResponse {
  @ApiProperty() path: string;
  @ApiProperty({ description: 'symlink, hardlink, fifo, device, socket, other, encoding, unreadable, or why an artifact was skipped.' }) reason: string;
}

export class ExecutionFilesResponse {
  @ApiProperty({ type: [String], description: 'Files under /session the run created or modified (now in the thread\'s files).' }) changed: string[];
  @ApiProperty({ type: [String] }) deleted: string[];
  @ApiProperty({ type: () => [SkippedPathResponse] }) skipped: SkippedPathResponse[];
  @ApiPropertyOptional({ description: 'The walk stopped at its entry limit: the report is incomplete.' }) truncated?: boolean;
}

export class ExecutionResponse implements ExecutionView {
  @ApiProperty({ example: 'exe_01J…' }) id: string;
  @ApiProperty() sessionId: string;
  @ApiProperty() threadId: string;
  @ApiProperty({ enum: ['code', 'command'], description: '`code`: Python run in the REPL; `command`: a process (POST /v1/sessions/:id/commands).' }) kind: ExecutionView['kind'];
  @ApiProperty({ enum: ['queued', 'running', 'ok', 'error', 'timeout', 'memory', 'killed'] }) status: ExecutionView['status'];
  @ApiPropertyOptional({ type: 'integer', nullable: true, description: "Commands only: the process's exit status; null when a signal ended it (the platform's at a timeout or out of memory)." }) exitCode?: number | null;
  @ApiPropertyOptional({ type: 'string', nullable: true, example: 'SIGKILL', description: 'Commands only: the signal that ended the process, if one did (SIGKILL at a timeout).' }) signal?: string | null;
  @ApiPropertyOptional({ type: 'integer', nullable: true, description: 'Background processes only: its pid in the sandbox.' }) pid?: number | null;
  @ApiProperty() stdout: string;
  @ApiProperty() stderr: string;
  @ApiProperty({ description: 'Output was cut at the session\'s maxOutputBytes.' }) truncated: boolean;
  @ApiProperty({ type: () => RichResultResponse, nullable: true }) result: ExecutionView['result'];
  @ApiProperty({ type: () => PythonErrorResponse, nullable: true }) error: ExecutionView['error'];
  @ApiProperty({ description: 'The session was re-created before this run: variables from earlier runs are gone.' }) stateLost: boolean;
  @ApiProperty({ type: () => ExecutionFilesResponse }) files: ExecutionFilesResponse;
  @ApiProperty({ type: 'array', items: { type: 'object', additionalProperties: true }, description: 'Artifact descriptors of what the run left in /session/artifacts/.' }) artifacts: unknown[];
  @ApiProperty({ type: () => [SkippedPathResponse] }) artifactsSkipped: SkippedPathResponse[];
  @ApiProperty() codeSha256: string;
  @ApiProperty({ type: 'string', nullable: true }) idempotencyKey: string | null;
  @ApiProperty({ type: 'integer', nullable: true }) durationMs: number | null;
  @ApiProperty({ type: 'number', nullable: true, description: "CPU time of the sandbox while the code ran (its cgroup's counter)." }) cpuMs: number | null;
  @ApiPropertyOptional({ type: 'integer', description: 'Present when this run first resumed its hibernated session: how long the restore took, in ms.' }) resumedMs?: number;
  @ApiPropertyOptional({ description: 'Present when stateLost is true and the platform knows why, e.g. a checkpoint that could not be restored.' }) stateLostReason?: string;
  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ type: 'string', format: 'date-time', nullable: true }) finishedAt: string | null;
}

export class InterruptResponse {
  @ApiProperty({ example: 'exe_01jd6v4m9t2q8x' }) id: string;
  @ApiProperty({ description: 'The execution\'s status when the interrupt was sent: queued or running, or the status it ended with.' }) status: string;
  @ApiProperty({
    description:
      'Whether the execution\'s worker was asked to stop it. False when it had already ended. The record (GET /v1/executions/:id, or the answer of the request that started it) says how it ended: usually `error` with a KeyboardInterrupt, `killed` if the code ignored the interrupt.',
  })
  requested: boolean;
}

export class SessionInterruptResponse {
  @ApiProperty({ example: 'ses_01jd6v4m9t2q8x' }) sessionId: string;
  @ApiProperty({
    type: [String],
    description: 'The executions that were running or waiting in the session, oldest first; each was asked to stop. Empty when none was.',
  })
  interrupted: string[];
}
