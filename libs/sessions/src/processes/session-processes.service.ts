import { randomUUID } from 'node:crypto';
import { Inject, Injectable } from '@nestjs/common';
import { DrydockError } from '@drydock/core';
import {
  EXECUTIONS_REPOSITORY,
  JOB_DISPATCHER,
  JobName,
  PROCESS_WATCH_RENEW_MS,
  processEventsChannel,
  type ExecutionRecord,
  type ExecutionsRepository,
  type JobDispatcher,
  type ProcessChannelMessage,
  type ProcessOpJobData,
  type ProcessOutput,
  type ProcessSignal,
} from '@drydock/execution';
import { commandLineOf } from '../commands/command-spec.js';
import { SessionsService } from '../sessions.service.js';
import type { SessionRecord } from '../sessions.repository.js';

// A background process as the API shows it (API.md "Commands, processes and terminals").
export interface ProcessView {
  id: string;
  pid: number | null;
  command: string;
  status: 'running' | 'exited';
  exitCode: number | null;
  signal: string | null;
  startedAt: string | null;
  endedAt: string | null;
}

// What an output stream sends: chunks in order (each once), then the exit.
export type ProcessStreamEvent =
  | { kind: 'chunk'; name: 'stdout' | 'stderr'; text: string }
  | { kind: 'exit'; exitCode: number | null; signal: string | null };

const OP_WAIT_MS = 15_000;
const LIST_LIMIT = 200;
const FINISHED = new Set(['ok', 'error', 'timeout', 'memory', 'killed']);

export class ProcessesError extends DrydockError {
  static notFound(processId: string) {
    return new ProcessesError('PROCESS_NOT_FOUND', `No background process with id ${processId} in this session.`, 404);
  }
  static notRunning(processId: string) {
    return new ProcessesError('PROCESS_NOT_RUNNING', `Process ${processId} has ended.`, 409);
  }
  static stdinClosed(processId: string) {
    return new ProcessesError('PROCESS_STDIN_CLOSED', `The standard input of process ${processId} is closed.`, 409);
  }
  static stdinFull(processId: string) {
    return new ProcessesError('PROCESS_STDIN_FULL', `Process ${processId} is not reading its input: 4 MiB are waiting already; try again later.`, 429);
  }
}

// The gateway's side of background processes: listing them (from their execution
// rows), their output (what the sandbox kept, then live, relayed from its worker over
// processEventsChannel), stdin and signals (ProcessOp jobs to the session's worker).
@Injectable()
export class SessionProcessesService {
  constructor(
    @Inject(EXECUTIONS_REPOSITORY) private readonly executions: ExecutionsRepository,
    @Inject(JOB_DISPATCHER) private readonly dispatcher: JobDispatcher,
    private readonly sessions: SessionsService,
  ) {}

  async list(tenantId: string, sessionId: string): Promise<ProcessView[]> {
    const session = await this.sessions.get(tenantId, sessionId);
    const rows = await this.executions.listBackground(tenantId, sessionId, LIST_LIMIT);
    return rows.map((row) => viewOf(row, row.code, session));
  }

  async get(tenantId: string, sessionId: string, processId: string): Promise<ProcessView> {
    const { session, record } = await this.find(tenantId, sessionId, processId);
    const listed = (await this.executions.listBackground(tenantId, sessionId, LIST_LIMIT)).find((row) => row.id === processId);
    return viewOf(record, listed?.code ?? '', session);
  }

  // The process's output from its start (what its sandbox kept of it), then live, then
  // its exit; ends when it has exited or `signal` aborts. From a session gone, or a
  // process its sandbox no longer knows, the output its record kept.
  async stream(tenantId: string, sessionId: string, processId: string, emit: (event: ProcessStreamEvent) => void, signal: AbortSignal): Promise<void> {
    const { session, record } = await this.find(tenantId, sessionId, processId);
    if (FINISHED.has(record.status) || !session.workerId || session.status === 'ended') return this.replayRecord(record, emit);
    const workerId = session.workerId;
    const token = randomUUID();
    let last = 0;
    let exited: ProcessStreamEvent | null = null;
    let wake: () => void = () => undefined;
    const early: ProcessChannelMessage[] = [];
    let ready = false;
    const onChunk = (seq: number, name: 'stdout' | 'stderr', text: string) => {
      if (seq <= last) return;
      last = seq;
      emit({ kind: 'chunk', name, text });
    };
    const onMessage = (message: ProcessChannelMessage) => {
      if (message.type === 'chunk') onChunk(message.seq, message.name, message.text);
      else exited = { kind: 'exit', exitCode: message.exitCode, signal: message.signal };
      if (exited) wake();
    };
    // Subscribed before the first read: a chunk published meanwhile is in both, and is
    // sent once (by its number).
    const unsubscribe = await this.dispatcher.subscribe(processEventsChannel(processId), (message) => {
      if (ready) onMessage(message as ProcessChannelMessage);
      else early.push(message as ProcessChannelMessage);
    });
    const read = async (): Promise<ProcessOutput> => {
      const output = await this.op<ProcessOutput>(workerId, { session: { sessionId, tenantId }, processId, op: 'read', after: last, watchToken: token });
      for (const [seq, name, text] of output.chunks) onChunk(seq, name, text);
      if (output.exit) exited = { kind: 'exit', ...output.exit };
      return output;
    };
    try {
      const first = await read();
      if (!first.known) {
        const latest = (await this.executions.findById(tenantId, processId)) ?? record;
        return this.replayRecord(latest, emit);
      }
      ready = true;
      for (const message of early.splice(0)) onMessage(message);
      // Renewing the watch's lease also reads whatever a lost message left out.
      while (!exited && !signal.aborted) {
        await new Promise<void>((resolve) => {
          const timer = setTimeout(resolve, PROCESS_WATCH_RENEW_MS);
          wake = () => {
            clearTimeout(timer);
            resolve();
          };
          signal.addEventListener('abort', wake, { once: true });
        });
        if (!exited && !signal.aborted) await read();
      }
      if (exited) emit(exited);
    } finally {
      await unsubscribe();
      void this.op(workerId, { session: { sessionId, tenantId }, processId, op: 'unwatch', watchToken: token }).catch(() => undefined);
    }
  }

  async writeStdin(tenantId: string, sessionId: string, processId: string, data: Buffer, eof: boolean): Promise<void> {
    const { session } = await this.findRunning(tenantId, sessionId, processId);
    const answer = await this.op<{ accepted: number; refused: string | null }>(session.workerId!, {
      session: { sessionId, tenantId },
      processId,
      op: 'stdin',
      data64: data.toString('base64'),
      eof,
    });
    if (answer.refused === 'closed') throw ProcessesError.stdinClosed(processId);
    if (answer.refused === 'full') throw ProcessesError.stdinFull(processId);
    if (answer.refused) throw ProcessesError.notRunning(processId);
  }

  async signal(tenantId: string, sessionId: string, processId: string, signal: ProcessSignal): Promise<{ delivered: boolean }> {
    const { session } = await this.findRunning(tenantId, sessionId, processId);
    return this.op<{ delivered: boolean }>(session.workerId!, { session: { sessionId, tenantId }, processId, op: 'signal', signal });
  }

  private async find(tenantId: string, sessionId: string, processId: string): Promise<{ session: SessionRecord; record: ExecutionRecord }> {
    const session = await this.sessions.get(tenantId, sessionId);
    const record = await this.executions.findById(tenantId, processId);
    if (!record || record.sessionId !== sessionId || !record.background || record.status === 'queued') throw ProcessesError.notFound(processId);
    return { session, record };
  }

  private async findRunning(tenantId: string, sessionId: string, processId: string): Promise<{ session: SessionRecord; record: ExecutionRecord }> {
    const found = await this.find(tenantId, sessionId, processId);
    if (FINISHED.has(found.record.status) || !found.session.workerId || found.session.status === 'ended') throw ProcessesError.notRunning(processId);
    return found;
  }

  private op<R>(workerId: string, data: ProcessOpJobData): Promise<R> {
    return this.dispatcher.dispatch<typeof JobName.ProcessOp, R>(workerId, JobName.ProcessOp, data, { waitMs: OP_WAIT_MS });
  }

  // What the record kept: stdout, then stderr (their order between each other is lost).
  private replayRecord(record: ExecutionRecord, emit: (event: ProcessStreamEvent) => void): void {
    if (record.stdout) emit({ kind: 'chunk', name: 'stdout', text: record.stdout });
    if (record.stderr) emit({ kind: 'chunk', name: 'stderr', text: record.stderr });
    emit({ kind: 'exit', exitCode: record.exitCode ?? null, signal: record.signal ?? null });
  }
}

function viewOf(record: ExecutionRecord, code: string, session: SessionRecord): ProcessView {
  // A process whose session ended went with it, whatever its row says (a worker that
  // stopped could not record its end).
  const exited = FINISHED.has(record.status) || session.status === 'ended';
  return {
    id: record.id,
    pid: record.pid ?? null,
    command: commandLineOf(code),
    status: exited ? 'exited' : 'running',
    exitCode: record.exitCode ?? null,
    signal: record.signal ?? null,
    startedAt: record.startedAt ? new Date(record.startedAt).toISOString() : null,
    endedAt: record.finishedAt ? new Date(record.finishedAt).toISOString() : exited && session.endedAt ? new Date(session.endedAt).toISOString() : null,
  };
}
