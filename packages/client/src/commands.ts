import { unwrap, unwrapStream, type Transport } from './http.js';
import { followRun, wantsStream, type OutputCallbacks } from './run-stream.js';
import type { CommandResult } from './types.js';

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
  async run(cmd: string | readonly string[], options: CommandOptions = {}): Promise<CommandResult> {
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
}
