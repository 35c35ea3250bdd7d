import { DrydockError } from './errors.js';
import { unwrap, unwrapStream, type Transport } from './http.js';
import { followRun, wantsStream, type OutputCallbacks } from './run-stream.js';
import { serverSentEvents } from './streams.js';
import type { CommandResult, ProcessInfo } from './types.js';

export type ProcessSignal = 'SIGINT' | 'SIGTERM' | 'SIGKILL' | 'SIGHUP';

// How a background process ended.
export interface ProcessExit {
  exitCode: number | null;
  signal: string | null;
}

// With onStdout or onStderr (called with each chunk as the process writes it) the
// command is streamed.
export interface CommandOptions extends OutputCallbacks {
  // Where it starts: /session (the default) or a folder under it.
  cwd?: string;
  // Variables added to the sandbox's environment (DRYDOCK_*, HOME, USER and LOGNAME are
  // the platform's: INVALID_ENV).
  env?: Record<string, string>;
  // Written to the process's standard input, which is then closed (empty otherwise).
  stdin?: string;
  // This command's time limit (the session's default otherwise); at the limit its whole
  // process group is killed.
  timeoutMs?: number;
  // Repeating a command with the same key returns the first run's record instead of
  // running it again; with a key the client also retries the request through outages.
  idempotencyKey?: string;
  // Aborting stops waiting; the process goes on until it ends or its time limit.
  signal?: AbortSignal;
}

// Processes in a session's sandbox, beside the REPL (whose variables they never touch):
// as the sandbox user, under the session's limits, seeing the thread's files in /session.
export class SessionCommands {
  constructor(
    private readonly http: Transport,
    readonly sessionId: string,
  ) {}

  // Runs a shell line (a string, given to /bin/bash -c: pipes, globs, &&) or a program
  // with its arguments (a string[], no shell) and resolves to its record whatever its
  // status: a non-zero exit is `status: "error"` with the `exitCode`, not a throw.
  // With `background: true` it resolves as soon as the process started, to its handle
  // (ProcessHandle); onStdout/onStderr then receive its output from the start, as it
  // comes, until it exits (see ProcessHandle.wait).
  run(cmd: string | readonly string[], options: Omit<CommandOptions, 'timeoutMs'> & { background: true }): Promise<ProcessHandle>;
  run(cmd: string | readonly string[], options?: CommandOptions & { background?: false }): Promise<CommandResult>;
  async run(cmd: string | readonly string[], options: CommandOptions & { background?: boolean } = {}): Promise<CommandResult | ProcessHandle> {
    if (options.background) return this.start(cmd, options);
    const request = {
      params: { path: { id: this.sessionId } },
      body: {
        ...(typeof cmd === 'string' ? { command: cmd } : { argv: [...cmd] }),
        cwd: options.cwd,
        env: options.env,
        stdin: options.stdin,
        timeoutMs: options.timeoutMs,
        idempotencyKey: options.idempotencyKey,
      },
      signal: options.signal,
      // With a key, repeating the request returns the first run: safe to retry.
      ...(options.idempotencyKey ? { fetch: this.http.safeFetch } : {}),
    };
    if (!wantsStream(options)) return (await unwrap(this.http.api.POST('/v1/sessions/{id}/commands', request))) as CommandResult;
    const stream = await unwrapStream(
      this.http.api.POST('/v1/sessions/{id}/commands', { ...request, headers: { accept: 'text/event-stream' }, parseAs: 'stream' }),
    );
    return followRun<CommandResult>(stream, options, 'command');
  }

  // The session's background processes, newest first.
  async list(): Promise<ProcessInfo[]> {
    return (await unwrap(this.http.api.GET('/v1/sessions/{id}/processes', { params: { path: { id: this.sessionId } } }))).processes;
  }

  // A handle on a background process started earlier (by id).
  process(id: string, pid: number | null = null): ProcessHandle {
    return new ProcessHandle(this.http, this.sessionId, id, pid);
  }

  private async start(cmd: string | readonly string[], options: CommandOptions): Promise<ProcessHandle> {
    const started = (await unwrap(
      this.http.api.POST('/v1/sessions/{id}/commands', {
        params: { path: { id: this.sessionId } },
        body: {
          ...(typeof cmd === 'string' ? { command: cmd } : { argv: [...cmd] }),
          cwd: options.cwd,
          env: options.env,
          stdin: options.stdin,
          background: true,
          idempotencyKey: options.idempotencyKey,
        },
        signal: options.signal,
        ...(options.idempotencyKey ? { fetch: this.http.safeFetch } : {}),
      }),
    )) as unknown as { id: string; pid: number | null; status: string; error?: { name: string; value: string } };
    // A process whose sandbox could not be made is answered with its (failed) record.
    if (started.status !== 'running') throw new DrydockError('PROCESS_NOT_STARTED', started.error?.value ?? `the process ended ${started.status}`, 200);
    const handle = new ProcessHandle(this.http, this.sessionId, started.id, started.pid);
    if (wantsStream(options)) handle.following = handle.output(options);
    return handle;
  }
}

// A background process: it runs beside runs and commands until it exits, is signalled,
// or its session ends.
export class ProcessHandle {
  // The output stream opened for run()'s callbacks, which wait() then resolves with.
  following: Promise<ProcessExit> | null = null;

  constructor(
    private readonly http: Transport,
    readonly sessionId: string,
    readonly id: string,
    readonly pid: number | null,
  ) {}

  // Its output from its start (what the sandbox kept: the newest 1 MiB), then as it
  // writes, until it exits; resolves with how it ended. Aborting `signal` stops reading.
  async output(callbacks: OutputCallbacks & { signal?: AbortSignal } = {}): Promise<ProcessExit> {
    const stream = await unwrapStream(
      this.http.api.GET('/v1/sessions/{id}/processes/{processId}/output', {
        params: { path: { id: this.sessionId, processId: this.id } },
        headers: { accept: 'text/event-stream' },
        parseAs: 'stream',
        signal: callbacks.signal,
      }),
    );
    for await (const { event, data } of serverSentEvents(stream)) {
      const payload = JSON.parse(data) as Record<string, unknown>;
      if (event === 'stdout') callbacks.onStdout?.(String(payload.text));
      else if (event === 'stderr') callbacks.onStderr?.(String(payload.text));
      else if (event === 'exit') return { exitCode: (payload.exitCode as number | null) ?? null, signal: (payload.signal as string | null) ?? null };
      else if (event === 'error') throw new DrydockError(String(payload.code), String(payload.message), 502);
    }
    throw new DrydockError('STREAM_ENDED', `the output stream of process ${this.id} ended before its exit`, 502);
  }

  // Waits until it exits (following its output, to the callbacks given to run()).
  wait(options: { signal?: AbortSignal } = {}): Promise<ProcessExit> {
    return this.following ?? this.output(options);
  }

  async info(): Promise<ProcessInfo> {
    return unwrap(this.http.api.GET('/v1/sessions/{id}/processes/{processId}', { params: { path: { id: this.sessionId, processId: this.id } } }));
  }

  // Writes to its standard input (a string as UTF-8); `eof` closes it after.
  async sendStdin(data: string | Uint8Array, options: { eof?: boolean } = {}): Promise<void> {
    const body = typeof data === 'string' ? new TextEncoder().encode(data) : data;
    await unwrap(
      this.http.api.POST('/v1/sessions/{id}/processes/{processId}/stdin', {
        params: { path: { id: this.sessionId, processId: this.id }, query: options.eof ? { eof: true } : {} },
        body: body as never,
        bodySerializer: (b: unknown) => b as never,
        headers: { 'content-type': 'application/octet-stream' },
      }),
    );
  }

  closeStdin(): Promise<void> {
    return this.sendStdin(new Uint8Array(0), { eof: true });
  }

  // Sends a signal to it and its group (default SIGKILL); whether it was delivered.
  async kill(signal: ProcessSignal = 'SIGKILL'): Promise<boolean> {
    const answer = await unwrap(
      this.http.api.POST('/v1/sessions/{id}/processes/{processId}/signal', { params: { path: { id: this.sessionId, processId: this.id } }, body: { signal } }),
    );
    return answer.delivered;
  }
}
