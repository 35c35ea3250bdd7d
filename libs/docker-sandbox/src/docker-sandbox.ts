import { randomUUID } from 'node:crypto';
import { PassThrough, Readable, type Duplex } from 'node:stream';
import type Docker from 'dockerode';
import {
  encodeFrame,
  FrameDecoder,
  type DecodedFrame,
  type DoneFrame,
  type FsDeletedEvent,
  type FsWrittenEvent,
  type RecycledEvent,
  type ReplRequest,
  type SessionChangeReport,
} from '@drydock/execution';
import { ChannelFileRead } from './channel-file-read.js';
import { ChannelProcesses } from './channel-processes.js';
import { ChannelTerminals } from './channel-terminals.js';
import { readSessionArchive, SESSION_ROOT, walkSessionArchive } from './session-archive.js';
import {
  CheckpointRefusedError,
  failedRunOutcome,
  outcomeFromDone,
  SandboxFileChangedError,
  type FsDeleteOutcome,
  type FsWriteOutcome,
  type OutputListener,
  type RecycleOutcome,
  type RunOutcome,
  type RunRequest,
  type Sandbox,
  type SandboxProcesses,
  type SandboxTerminals,
  type SessionFileIn,
  type SessionFileRead,
  type SessionTreeEntry,
} from '@drydock/execution';

// Up to this many paths are read back one archive each; more are read from one
// archive of the whole /session (one daemon round trip instead of hundreds).
const PER_FILE_READ_LIMIT = 16;
const FS_DELETE_TIMEOUT_MS = 10_000;
// An fs-write is answered once its last byte is written: this long, plus a second for
// every 16 MiB it carries (the supervisor writes far faster; only a wedged one is late).
const FS_WRITE_TIMEOUT_MS = 30_000;
const FS_WRITE_MS_PER_BYTE = 1_000 / (16 * 1024 * 1024);
const RECYCLE_TIMEOUT_MS = 10_000;
const CHECKPOINT_ANSWER_TIMEOUT_MS = 10_000;

interface PendingRun {
  id: string;
  resolve: (done: DoneFrame) => void;
  reject: (error: Error) => void;
  onOutput?: OutputListener;
}

export class SandboxGoneError extends Error {}

// One container and the REPL supervisor inside it, reached over the attached
// stdin/stdout: no `docker exec` on the hot path.
export class DockerSandbox implements Sandbox {
  private readonly decoder = new FrameDecoder();
  private pending: PendingRun | null = null;
  private readyWaiter: { resolve: () => void; reject: (e: Error) => void } | null = null;
  private isAlive = true;
  private exitReason: string | null = null;
  private readonly deletes = new Map<string, { resolve: (e: FsDeletedEvent) => void; reject: (e: Error) => void }>();
  private readonly writes = new Map<string, { resolve: (e: FsWrittenEvent) => void; reject: (e: Error) => void }>();
  private readonly recycles = new Map<string, { resolve: (e: RecycledEvent) => void; reject: (e: Error) => void }>();
  // Optional requests the supervisor announced it knows.
  private features = new Set<string>();
  // fs-read requests being answered, and the one whose file bytes are arriving.
  private readonly fileReads = new Map<string, ChannelFileRead>();
  private rawTarget: ChannelFileRead | null = null;
  // Files were put into /session from outside since the last run (a new sandbox counts).
  private wroteSession = true;
  private readonly channelProcesses = new ChannelProcesses((message) => this.send(message));
  private readonly channelTerminals = new ChannelTerminals((message) => this.send(message));
  // The supervisor let go of its channel for a checkpoint (letGo): its end is not the
  // sandbox's end.
  private suspended = false;
  private checkpointAnswer: { resolve: (refusal: string | null) => void } | null = null;
  private readonly listings = new Map<string, { resolve: (files: SessionChangeReport) => void; reject: (e: Error) => void }>();

  constructor(
    readonly id: string,
    private readonly container: Docker.Container,
    private channel: Duplex,
    private readonly hardDeadlineSlackMs: number,
    // Removes what the sandbox owns besides its container (its /session volume).
    private readonly releaseResources: () => Promise<unknown> = async () => undefined,
  ) {}

  get alive(): boolean {
    return this.isAlive;
  }

  // Background processes, when the supervisor announced it can run them.
  get processes(): SandboxProcesses | undefined {
    return this.features.has('background') ? this.channelProcesses : undefined;
  }

  get terminals(): SandboxTerminals | undefined {
    return this.features.has('terminals') ? this.channelTerminals : undefined;
  }

  // Wires the demultiplexed stdout of the attached container to the frame decoder.
  // Called once, before the container starts, so the `ready` frame cannot be missed.
  attach(modem: { demuxStream: (s: Duplex, out: NodeJS.WritableStream, err: NodeJS.WritableStream) => void }): void {
    const stdout = new PassThrough();
    const stderr = new PassThrough();
    modem.demuxStream(this.channel, stdout, stderr);
    stdout.on('data', (chunk: Buffer) => this.onBytes(chunk));
    // The supervisor's own log lines; user output never travels here.
    stderr.resume();
    this.watchChannel();
  }

  // The socket channel instead: frames only, no stream multiplexing. Called on the
  // connection as it opens; the supervisor sends `ready` once it has accepted it.
  connect(): void {
    const channel = this.channel;
    channel.on('data', (chunk: Buffer) => {
      if (channel === this.channel) this.onBytes(chunk);
    });
    this.watchChannel();
  }

  private watchChannel(): void {
    const channel = this.channel;
    const gone = (reason: string) => {
      if (channel === this.channel && !this.suspended) this.onGone(reason);
    };
    channel.on('end', () => gone('the sandbox channel closed'));
    channel.on('close', () => gone('the sandbox channel closed'));
    channel.on('error', (error) => gone(`sandbox channel error: ${error.message}`));
  }

  // Whether its supervisor can let go of the channel for a checkpoint (socket channel).
  get checkpointable(): boolean {
    return this.features.has('checkpoint');
  }

  // Asks the supervisor to let go of its channel for a checkpoint (checkpoint.py), between
  // runs. Throws CheckpointRefusedError when it will not (the sandbox runs on).
  async letGo(): Promise<void> {
    this.assertAlive();
    if (this.pending) throw new CheckpointRefusedError('a run is in progress');
    if (!this.checkpointable) throw new CheckpointRefusedError("this sandbox's supervisor cannot be checkpointed");
    const id = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    const refusal = await new Promise<string | null>((resolve) => {
      this.checkpointAnswer = { resolve };
      timer = setTimeout(() => resolve(`no answer within ${CHECKPOINT_ANSWER_TIMEOUT_MS} ms`), CHECKPOINT_ANSWER_TIMEOUT_MS);
      this.send({ op: 'checkpoint', id });
    }).finally(() => {
      clearTimeout(timer);
      this.checkpointAnswer = null;
    });
    if (refusal !== null) throw new CheckpointRefusedError(refusal);
  }

  async listFiles(): Promise<SessionChangeReport> {
    this.assertAlive();
    if (!this.features.has('fs-list')) throw new Error("this sandbox's supervisor cannot list its files");
    const id = randomUUID();
    let timer: NodeJS.Timeout | undefined;
    try {
      return await new Promise<SessionChangeReport>((resolve, reject) => {
        this.listings.set(id, { resolve, reject });
        timer = setTimeout(() => reject(new Error(`no file listing within ${FS_DELETE_TIMEOUT_MS} ms`)), FS_DELETE_TIMEOUT_MS);
        this.send({ op: 'fs-list', id });
      });
    } finally {
      clearTimeout(timer);
      this.listings.delete(id);
    }
  }

  // After a checkpoint that failed, the supervisor's new connection (it listens again once
  // the resume file is there): the sandbox goes on where it was.
  async reattach(channel: Duplex, timeoutMs: number): Promise<void> {
    const old = this.channel;
    this.channel = channel;
    old.destroy();
    this.decoder.reset();
    const ready = this.waitReady(timeoutMs);
    this.connect();
    this.suspended = false;
    await ready;
  }

  waitReady(timeoutMs: number): Promise<void> {
    return new Promise((resolve, reject) => {
      const timer = setTimeout(() => {
        this.readyWaiter = null;
        reject(new SandboxGoneError(`the sandbox did not become ready within ${timeoutMs} ms`));
      }, timeoutMs);
      this.readyWaiter = {
        resolve: () => {
          clearTimeout(timer);
          resolve();
        },
        reject: (e) => {
          clearTimeout(timer);
          reject(e);
        },
      };
    });
  }

  async run(request: RunRequest, onOutput?: OutputListener): Promise<RunOutcome> {
    if (!this.isAlive) throw new SandboxGoneError(this.exitReason ?? 'the sandbox is gone');
    if (this.pending) throw new Error('a run is already in progress on this sandbox');
    if (request.command && !this.features.has('commands')) {
      return failedRunOutcome({
        status: 'error',
        name: 'CommandsUnsupported',
        value: "This session's sandbox image cannot run commands (its supervisor predates them): rebuild the sandbox image.",
      });
    }
    const started = performance.now();
    const done = new Promise<DoneFrame>((resolve, reject) => {
      this.pending = { id: request.id, resolve, reject, onOutput };
    });
    // The supervisor may reuse the last exec's snapshot of /session as this one's
    // "before" only if nothing was put there from outside since. Output comes as it is
    // written only for a listener; `done` carries all of it anyway.
    const { code, command, ...rest } = request;
    this.send({ op: 'exec', ...rest, ...(command ? { command } : { code }), sessionUnchanged: !this.wroteSession, stream: onOutput !== undefined });
    this.wroteSession = false;
    // The supervisor enforces the timeout itself; this deadline only fires when the
    // supervisor is wedged, in which case the container is killed.
    const deadlineMs = request.timeoutMs + this.hardDeadlineSlackMs;
    let timer: NodeJS.Timeout | undefined;
    const deadline = new Promise<'deadline'>((resolve) => {
      timer = setTimeout(() => resolve('deadline'), deadlineMs);
    });
    try {
      const first = await Promise.race([done, deadline]);
      if (first === 'deadline') {
        this.pending = null;
        await this.kill('the sandbox did not answer after its timeout');
        return this.lostOutcome('timeout', started);
      }
      return outcomeFromDone(first);
    } catch (error) {
      if (error instanceof SandboxGoneError) {
        return this.lostOutcome(await this.exitStatus(), started);
      }
      throw error;
    } finally {
      clearTimeout(timer);
      this.pending = null;
    }
  }

  interrupt(runId: string): boolean {
    if (!this.isAlive || this.pending?.id !== runId || !this.features.has('interrupt')) return false;
    this.send({ op: 'interrupt', id: runId });
    return true;
  }

  // Over the host channel (fs-write): the supervisor writes the files inside the
  // container as the sandbox user, following no link. Docker's archive API is never
  // used for this: dockerd extracts from the host side, and a folder swapped for a
  // symlink by code meanwhile let it write outside /session (CVE-2018-15664's class).
  async putFiles(files: SessionFileIn[]): Promise<FsWriteOutcome> {
    if (files.length === 0) return { written: 0, refused: [] };
    this.assertAlive();
    if (!this.features.has('fs-write')) {
      throw new Error('this sandbox image cannot receive files safely (no fs-write): rebuild the sandbox image');
    }
    if (this.pending) throw new Error('files cannot be written while a run is in progress');
    const id = randomUUID();
    const answer = new Promise<FsWrittenEvent>((resolve, reject) => this.writes.set(id, { resolve, reject }));
    let bytes = 0;
    for (const file of files) bytes += file.content.length;
    let timer: NodeJS.Timeout | undefined;
    const timeoutMs = FS_WRITE_TIMEOUT_MS + Math.ceil(bytes * FS_WRITE_MS_PER_BYTE);
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the sandbox did not answer fs-write in ${timeoutMs} ms`)), timeoutMs);
    });
    try {
      this.wroteSession = true;
      this.send({
        op: 'fs-write',
        id,
        files: files.map((f) => ({ path: f.path, size: f.content.length, mtimeMs: f.modifiedAt.getTime() })),
      });
      // The contents follow the frame as they are, in order: the socket queues the
      // buffers themselves (no copy), and nothing else is written in between.
      for (const file of files) if (file.content.length > 0) this.channel.write(file.content);
      const { written, refused } = await Promise.race([answer, timeout]);
      return { written, refused };
    } catch (error) {
      // Unanswered, the channel may be out of step: the sandbox cannot be trusted with more.
      if (!(error instanceof SandboxGoneError)) await this.kill((error as Error).message);
      throw error;
    } finally {
      clearTimeout(timer);
      this.writes.delete(id);
    }
  }

  async *readFiles(paths: string[], options: { maxFileBytes: number }): AsyncGenerator<SessionFileRead> {
    const wanted = new Set<string>();
    for (const path of paths) {
      if (isSessionPath(path)) wanted.add(path);
      else yield { path, skipped: 'invalid-path' };
    }
    if (wanted.size === 0) return;
    this.assertAlive();
    if (this.canReadOverChannel()) {
      for await (const entry of this.readOverChannel([...wanted], options.maxFileBytes)) {
        if (entry.kind !== 'file') {
          yield { path: entry.path, skipped: entry.kind };
          continue;
        }
        // One file still being written does not stop the others: the answers after it
        // arrive as usual.
        const content = await collect(entry.content as Readable, entry.size).catch((error: unknown) => {
          if (error instanceof SandboxFileChangedError) return null;
          throw error;
        });
        yield content ? { path: entry.path, content } : { path: entry.path, skipped: 'changing' };
      }
      return;
    }
    if (wanted.size <= PER_FILE_READ_LIMIT) {
      for (const path of wanted) {
        const requested = `${SESSION_ROOT}${path}`;
        const archive = await this.archiveOf(requested);
        if (!archive) yield { path, skipped: 'vanished' };
        else yield* readSessionArchive(archive, requested, new Set([path]), options.maxFileBytes);
      }
      return;
    }
    const archive = await this.archiveOf(SESSION_ROOT);
    if (!archive) throw new SandboxGoneError('/session is not readable');
    yield* readSessionArchive(archive, SESSION_ROOT, wanted, options.maxFileBytes);
  }

  async *exportFiles(paths: string[], options: { maxFileBytes: number }): AsyncGenerator<SessionTreeEntry> {
    const wanted = new Set<string>();
    for (const path of paths) {
      if (isSessionPath(path)) wanted.add(path);
      else yield { path, kind: 'invalid-path', size: 0, content: Readable.from([]) };
    }
    if (wanted.size === 0) return;
    this.assertAlive();
    if (this.canReadOverChannel()) {
      yield* this.readOverChannel([...wanted], options.maxFileBytes);
      return;
    }
    // A supervisor without fs-read: one archive of the folder holding them all.
    const requested = `${SESSION_ROOT}${commonFolder([...wanted])}`.replace(/\/$/, '');
    const archive = await this.archiveOf(requested);
    if (archive) {
      for await (const entry of walkSessionArchive(archive, requested)) {
        if (!wanted.delete(entry.path)) continue;
        yield entry.kind === 'file' && entry.size > options.maxFileBytes ? { ...entry, kind: 'too-large' } : entry;
      }
    }
    for (const path of wanted) yield { path, kind: 'vanished', size: 0, content: Readable.from([]) };
  }

  // fs-read needs a supervisor that knows it, and no run in progress (the supervisor
  // answers it from its one loop, which a run's events need).
  private canReadOverChannel(): boolean {
    return this.features.has('fs-read') && this.pending === null;
  }

  // Asks the supervisor for regular files of /session; their bytes come back on the
  // channel itself, straight from the file (decision 013).
  private async *readOverChannel(paths: string[], maxBytes: number): AsyncGenerator<SessionTreeEntry> {
    const id = randomUUID();
    const read = new ChannelFileRead(id, paths.length, maxBytes, { pause: () => this.channel.pause(), resume: () => this.channel.resume() });
    this.fileReads.set(id, read);
    this.send({ op: 'fs-read', id, paths, maxBytes });
    yield* read.entries();
  }

  async deleteFiles(paths: string[]): Promise<FsDeleteOutcome> {
    if (paths.length === 0) return { deleted: [], missing: [], refused: [] };
    this.assertAlive();
    if (this.pending) throw new Error('files cannot be deleted while a run is in progress');
    const id = randomUUID();
    const answer = new Promise<FsDeletedEvent>((resolve, reject) => this.deletes.set(id, { resolve, reject }));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<never>((_, reject) => {
      timer = setTimeout(() => reject(new Error(`the sandbox did not answer fs-delete in ${FS_DELETE_TIMEOUT_MS} ms`)), FS_DELETE_TIMEOUT_MS);
    });
    try {
      this.send({ op: 'fs-delete', id, paths });
      const { deleted, missing, refused } = await Promise.race([answer, timeout]);
      return { deleted, missing, refused };
    } finally {
      clearTimeout(timer);
      this.deletes.delete(id);
    }
  }

  async recycle(): Promise<RecycleOutcome> {
    if (!this.isAlive) return { clean: false, problems: ['the sandbox is gone'], durationMs: 0 };
    if (this.pending) return { clean: false, problems: ['a run is in progress'], durationMs: 0 };
    if (!this.features.has('recycle')) return { clean: false, problems: ['this sandbox image cannot recycle'], durationMs: 0 };
    const id = randomUUID();
    const answer = new Promise<RecycledEvent>((resolve, reject) => this.recycles.set(id, { resolve, reject }));
    let timer: NodeJS.Timeout | undefined;
    const timeout = new Promise<RecycledEvent>((resolve) => {
      // A supervisor that does not know the request never answers it.
      timer = setTimeout(
        () => resolve({ ev: 'recycled', id, clean: false, problems: [`no answer within ${RECYCLE_TIMEOUT_MS} ms`], durationMs: RECYCLE_TIMEOUT_MS }),
        RECYCLE_TIMEOUT_MS,
      );
    });
    try {
      this.send({ op: 'recycle', id });
      const { clean, problems, durationMs } = await Promise.race([answer, timeout]);
      // The next run's "before" snapshot must be taken afresh.
      this.wroteSession = true;
      return { clean, problems, durationMs };
    } catch (error) {
      return { clean: false, problems: [(error as Error).message], durationMs: 0 };
    } finally {
      clearTimeout(timer);
      this.recycles.delete(id);
    }
  }

  async destroy(): Promise<void> {
    // Fails a run in progress now rather than at its deadline.
    this.onGone('the sandbox was destroyed');
    try {
      this.channel.destroy();
    } catch {
      /* already closed */
    }
    await this.container.remove({ force: true }).catch((error: { statusCode?: number }) => {
      if (error.statusCode !== 404 && error.statusCode !== 409) throw error;
    });
    await this.releaseResources();
  }

  private assertAlive(): void {
    if (!this.isAlive) throw new SandboxGoneError(this.exitReason ?? 'the sandbox is gone');
  }

  // The archive of one container path, or null when it does not exist.
  private async archiveOf(path: string): Promise<Readable | null> {
    try {
      return (await this.container.getArchive({ path })) as unknown as Readable;
    } catch (error) {
      if ((error as { statusCode?: number }).statusCode === 404) return null;
      throw error;
    }
  }

  private send(message: ReplRequest): void {
    this.channel.write(encodeFrame(message));
  }

  private onBytes(chunk: Buffer): void {
    let events: DecodedFrame[];
    try {
      events = this.decoder.push(chunk);
    } catch (error) {
      void this.kill(`bad frame from the sandbox: ${(error as Error).message}`);
      return;
    }
    for (const event of events) this.onEvent(event);
  }

  private onEvent(event: DecodedFrame): void {
    switch (event.ev) {
      case 'fs-data':
        this.rawTarget?.onData(event.data);
        return;
      case 'fs-file': {
        const read = this.fileReads.get(event.id);
        if (read && !read.accepts(event)) {
          // As the archive path caps a file by its tar header: never buffer more than asked.
          void this.kill(`the sandbox answered fs-read outside the request (${event.path})`);
          return;
        }
        read?.onFile(event);
        this.rawTarget = 'size' in event ? (read ?? null) : null;
        if (read?.finished) this.fileReads.delete(event.id);
        return;
      }
      case 'fs-file-end': {
        const read = this.fileReads.get(event.id);
        read?.onFileEnd(event);
        this.rawTarget = null;
        if (read?.finished) this.fileReads.delete(event.id);
        return;
      }
      case 'checkpoint-ready':
        // The supervisor closes its end next.
        this.suspended = true;
        this.checkpointAnswer?.resolve(null);
        return;
      case 'fs-listed':
        this.listings.get(event.id)?.resolve(event.files);
        return;
      case 'checkpoint-refused':
        this.checkpointAnswer?.resolve(event.reason);
        return;
      case 'ready':
        this.features = new Set(event.features ?? []);
        this.readyWaiter?.resolve();
        this.readyWaiter = null;
        return;
      case 'stream':
        if (this.pending?.id === event.id) this.pending.onOutput?.(event.name, event.text);
        return;
      case 'done':
        if (this.pending?.id === event.id) this.pending.resolve(event);
        return;
      case 'fs-deleted':
        this.deletes.get(event.id)?.resolve(event);
        return;
      case 'fs-written':
        this.writes.get(event.id)?.resolve(event);
        return;
      case 'recycled':
        this.recycles.get(event.id)?.resolve(event);
        return;
      case 'bg-started':
      case 'bg-refused':
      case 'bg-output':
      case 'bg-chunk':
      case 'bg-exit':
      case 'bg-stdin-done':
      case 'bg-signalled':
        this.channelProcesses.onFrame(event);
        return;
      case 'pty-opened':
      case 'pty-refused':
      case 'pty-output':
      case 'pty-exit':
        this.channelTerminals.onFrame(event);
        return;
      default:
        return;
    }
  }

  private onGone(reason: string): void {
    if (!this.isAlive) return;
    this.isAlive = false;
    this.exitReason = reason;
    const error = new SandboxGoneError(reason);
    this.readyWaiter?.reject(error);
    this.readyWaiter = null;
    this.pending?.reject(error);
    for (const waiter of this.deletes.values()) waiter.reject(error);
    for (const waiter of this.writes.values()) waiter.reject(error);
    for (const waiter of this.recycles.values()) waiter.reject(error);
    for (const waiter of this.listings.values()) waiter.reject(error);
    for (const read of this.fileReads.values()) read.fail(error);
    this.fileReads.clear();
    this.channelProcesses.onGone(error, this.suspended);
    this.channelTerminals.onGone(error);
    this.rawTarget = null;
  }

  private async kill(reason: string): Promise<void> {
    this.onGone(reason);
    await this.container.kill().catch(() => undefined);
  }

  // Why the container stopped: the kernel's OOM killer or something else.
  private async exitStatus(): Promise<'memory' | 'killed'> {
    try {
      const info = await this.container.inspect();
      return info.State.OOMKilled ? 'memory' : 'killed';
    } catch {
      return 'killed';
    }
  }

  private lostOutcome(status: 'timeout' | 'memory' | 'killed', started: number): RunOutcome {
    const message =
      status === 'timeout'
        ? 'The code did not stop after its timeout; the sandbox was restarted.'
        : status === 'memory'
          ? 'The sandbox ran out of memory and was restarted.'
          : 'The sandbox stopped unexpectedly and was restarted.';
    // The container is gone with its /session volume: nothing can be read back.
    return failedRunOutcome({
      status,
      name: status === 'memory' ? 'MemoryError' : 'SandboxRestarted',
      value: message,
      durationMs: Math.round(performance.now() - started),
    });
  }
}

// "/a/b": absolute, no empty, `.` or `..` component, no NUL.
function isSessionPath(path: string): boolean {
  if (typeof path !== 'string' || !path.startsWith('/') || path.includes('\0')) return false;
  const parts = path.slice(1).split('/');
  return parts.every((p) => p !== '' && p !== '.' && p !== '..');
}

// The deepest folder holding every path ("/artifacts" for "/artifacts/a" and
// "/artifacts/b/c"; "/" when they share none).
export function commonFolder(paths: string[]): string {
  let parts = paths[0]!.split('/').slice(1, -1);
  for (const path of paths.slice(1)) {
    const other = path.split('/').slice(1, -1);
    let n = 0;
    while (n < parts.length && n < other.length && parts[n] === other[n]) n++;
    parts = parts.slice(0, n);
  }
  return `/${parts.join('/')}`;
}

async function collect(content: Readable, size: number): Promise<Buffer> {
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of content as AsyncIterable<Buffer>) {
    chunks.push(chunk);
    bytes += chunk.length;
  }
  // A slice of a larger channel read is copied: kept as is, it would hold the whole read.
  const only = chunks.length === 1 ? chunks[0]! : null;
  return only && bytes === size && only.byteLength === only.buffer.byteLength ? only : Buffer.concat(chunks, bytes);
}
