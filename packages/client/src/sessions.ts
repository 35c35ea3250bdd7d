import { SessionCommands } from './commands.js';
import { unwrap, unwrapStream, type Transport } from './http.js';
import { ThreadFiles } from './files.js';
import { everyItem } from './pages.js';
import { followRun, wantsStream, type OutputCallbacks } from './run-stream.js';
import { Terminal, type TerminalOptions } from './terminals.js';
import type { Connection, CreateSessionOptions, Execution, SessionInfo, SessionNetwork, SessionNetworkQuery, Snapshot } from './types.js';

// With onStdout or onStderr (called with each chunk as the code prints it) the run is
// streamed.
export interface RunOptions extends OutputCallbacks {
  // This run's time limit (the session's default otherwise).
  timeoutMs?: number;
  // Repeating a run with the same key returns the first run's record instead of running
  // the code again; with a key the client also retries the request through outages.
  idempotencyKey?: string;
  signal?: AbortSignal;
}

// A sandbox with a Python REPL for one thread: variables persist between runs; files
// the code writes under /session are the thread's files.
export class Session {
  readonly files: ThreadFiles;
  // Shell commands and programs, run beside the REPL.
  readonly commands: SessionCommands;

  constructor(
    private readonly http: Transport,
    public info: SessionInfo,
  ) {
    this.files = new ThreadFiles(http, info.threadId);
    this.commands = new SessionCommands(http, info.id);
  }

  get id(): string {
    return this.info.id;
  }

  get threadId(): string {
    return this.info.threadId;
  }

  // Runs code and resolves to the finished execution, whatever its status (ok, error,
  // timeout, memory, killed): a Python exception is `execution.error`, not a throw.
  async run(code: string, options: RunOptions = {}): Promise<Execution> {
    const request = {
      params: { path: { id: this.id } },
      body: { code, timeoutMs: options.timeoutMs, idempotencyKey: options.idempotencyKey },
      signal: options.signal,
      // With a key, repeating the request returns the first run: safe to retry.
      ...(options.idempotencyKey ? { fetch: this.http.safeFetch } : {}),
    };
    if (!wantsStream(options)) {
      // Without `Accept: text/event-stream` the answer is the JSON record.
      return (await unwrap(this.http.api.POST('/v1/sessions/{id}/executions', request))) as Execution;
    }
    const stream = await unwrapStream(
      this.http.api.POST('/v1/sessions/{id}/executions', { ...request, headers: { accept: 'text/event-stream' }, parseAs: 'stream' }),
    );
    return followRun<Execution>(stream, options, 'execution');
  }

  // An interactive shell on a pseudo-terminal in the session's container (bash, as the
  // sandbox user, in /session), once the WebSocket is open. At most 4 per session.
  pty(options: TerminalOptions = {}): Promise<Terminal> {
    return Terminal.open(this.http, this.id, options);
  }

  // Stops what runs in the session, like a notebook's interrupt: the running code gets a
  // KeyboardInterrupt (variables stay), runs waiting behind it never start. Each run's
  // record says how it ended. Resolves at once with the ids of the runs it stopped.
  // (Aborting `run`'s signal only stops waiting; the code goes on until this.)
  async interrupt(): Promise<string[]> {
    const answer = await unwrap(this.http.api.POST('/v1/sessions/{id}/interrupt', { params: { path: { id: this.id } } }));
    return answer.interrupted;
  }

  // Its network policy (null: the session has no network) and one page of its connection
  // log, newest first: pass `next` as `before` for the following page (null on the last).
  // `verdict` keeps the allowed or the denied ones; `limit` is the page's size (1-1000,
  // default 100). `connections()` walks every page.
  async network(options: SessionNetworkQuery & { signal?: AbortSignal } = {}): Promise<SessionNetwork> {
    const { signal, ...query } = options;
    return unwrap(this.http.api.GET('/v1/sessions/{id}/network', { params: { path: { id: this.id }, query }, signal }));
  }

  // Every connection attempt of its log, newest first, across pages (`pageSize` per
  // request, default 100), asked page by page as the loop goes.
  connections(options: Omit<SessionNetworkQuery, 'before' | 'limit'> & { pageSize?: number; signal?: AbortSignal } = {}): AsyncGenerator<Connection> {
    const { pageSize, ...rest } = options;
    return everyItem(async (before) => {
      const page = await this.network({ ...rest, ...(pageSize ? { limit: pageSize } : {}), ...(before ? { before } : {}) });
      return { items: page.connections, next: page.next };
    });
  }

  // Narrows its policy to `allow` (every entry must already be allowed by the current
  // one: widening is 422 NETWORK_NOT_ALLOWED with `details.entries`, as is a session
  // started without network); its next connections follow it at once. Resolves to the
  // session's updated state (also in `info`).
  async narrowNetwork(allow: readonly string[]): Promise<SessionInfo> {
    this.info = await unwrap(this.http.api.PATCH('/v1/sessions/{id}/network', { params: { path: { id: this.id } }, body: { allow: [...allow] } }));
    return this.info;
  }

  // Checkpoints the session (gvisor tier: its variables, processes and files) and removes
  // its container; the next run resumes it (`stateLost: false`, `resumedMs`). A runc
  // session is 422 CHECKPOINT_NOT_AVAILABLE. Resolves to its state (also in `info`).
  async hibernate(): Promise<SessionInfo> {
    this.info = await unwrap(this.http.api.POST('/v1/sessions/{id}/hibernate', { params: { path: { id: this.id } } }));
    return this.info;
  }

  // A snapshot between runs, kept (to `ttlSeconds`, at most the deployment's retention)
  // to fork sessions from with `sessions.fork(snapshot.id)`; the session goes on.
  async snapshot(options: { ttlSeconds?: number } = {}): Promise<Snapshot> {
    return unwrap(this.http.api.POST('/v1/sessions/{id}/snapshots', { params: { path: { id: this.id } }, body: options }));
  }

  // The session's current state from the platform.
  async refresh(): Promise<SessionInfo> {
    this.info = await unwrap(this.http.api.GET('/v1/sessions/{id}', { params: { path: { id: this.id } } }));
    return this.info;
  }

  // Ends the session: its container goes, the thread's files stay.
  async delete(): Promise<void> {
    await unwrap(this.http.api.DELETE('/v1/sessions/{id}', { params: { path: { id: this.id } } }));
  }
}

export class Sessions {
  constructor(private readonly http: Transport) {}

  // Starts a session, or returns the thread's live one (as it is, whatever the options
  // say). `network: {allow: [...]}` lets its code reach those hosts through the platform's
  // egress proxy, within the tenant's ceiling (422 NETWORK_NOT_ALLOWED otherwise, the
  // entries outside it in `details.entries`); without it the sandbox has no network.
  async create(options: CreateSessionOptions = {}): Promise<Session> {
    return new Session(this.http, await unwrap(this.http.api.POST('/v1/sessions', { body: options })));
  }

  async get(id: string): Promise<Session> {
    return new Session(this.http, await unwrap(this.http.api.GET('/v1/sessions/{id}', { params: { path: { id } } })));
  }

  // A new session from a snapshot: its variables, processes and files, and the settings
  // of the session it was taken of; on `threadId` (one without a live session) or a new
  // thread. = create({fromSnapshot, threadId}).
  async fork(snapshotId: string, options: { threadId?: string } = {}): Promise<Session> {
    return this.create({ fromSnapshot: snapshotId, ...options });
  }

  async list(options: { includeEnded?: boolean } = {}): Promise<Session[]> {
    const query = options.includeEnded ? { includeEnded: 'true' as const } : {};
    const body = await unwrap(this.http.api.GET('/v1/sessions', { params: { query } }));
    return body.sessions.map((info) => new Session(this.http, info));
  }
}

// The tenant's snapshots (docs/sessions.md): taken with `session.snapshot()`, forked with
// `sessions.fork(id)`.
export class Snapshots {
  constructor(private readonly http: Transport) {}

  // Newest first; expired ones are gone.
  async list(): Promise<Snapshot[]> {
    return (await unwrap(this.http.api.GET('/v1/snapshots'))).snapshots;
  }

  async get(id: string): Promise<Snapshot> {
    return unwrap(this.http.api.GET('/v1/snapshots/{id}', { params: { path: { id } } }));
  }

  // Sessions forked from it go on.
  async delete(id: string): Promise<void> {
    await unwrap(this.http.api.DELETE('/v1/snapshots/{id}', { params: { path: { id } } }));
  }
}
