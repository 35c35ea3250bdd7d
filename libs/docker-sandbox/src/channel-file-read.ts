import { Readable } from 'node:stream';
import { SandboxFileChangedError, type FsFileEndEvent, type FsFileEvent, type ReadSkipReason, type SessionTreeEntry } from '@drydock/execution';

// Bytes of a file buffered for its reader before the channel is paused.
const FILE_BUFFER_BYTES = 1 << 20;

// Pauses and resumes the host channel (the socket the answers arrive on).
export interface ChannelFlow {
  pause(): void;
  resume(): void;
}

// The answers to one fs-read request (decision 013), as entries in the order the paths
// were asked: a regular file with a stream of its bytes as they arrive on the channel,
// or the reason it was not read. The channel is paused while a file's reader is behind
// and resumed when it reads on, so a large file is never held in memory; bytes nobody
// reads (the reader moved on to the next entry, or stopped) are dropped as they come.
export class ChannelFileRead {
  private readonly ready: SessionTreeEntry[] = [];
  private wake: (() => void) | null = null;
  private failure: Error | null = null;
  private answered = 0;
  // The file whose bytes are arriving.
  private current: Readable | null = null;
  private abandoned = false;

  constructor(
    readonly id: string,
    private readonly expected: number,
    // The largest file asked for: a supervisor announcing more breaks the protocol.
    readonly maxBytes: number,
    private readonly flow: ChannelFlow,
  ) {}

  // Whether this answer keeps to the request: one per asked path, no file over maxBytes.
  accepts(event: FsFileEvent): boolean {
    return this.answered < this.expected && !('size' in event && event.size > this.maxBytes);
  }

  // Every path answered and the last file's bytes in: the request is over.
  get finished(): boolean {
    return this.answered >= this.expected && this.current === null;
  }

  onFile(event: FsFileEvent): void {
    this.answered++;
    if ('skipped' in event) {
      this.push({ path: event.path, kind: event.skipped as ReadSkipReason, size: 0, content: Readable.from([]) });
      return;
    }
    const content = new Readable({ highWaterMark: FILE_BUFFER_BYTES, read: () => this.flow.resume() });
    // The file may fail (onFileEnd, fail) before its reader has taken the entry or started
    // reading, even in the same read of the channel as its header. With no listener the
    // 'error' would be thrown from the event loop and end the worker; the stream keeps the
    // error (`errored`), and the reader's iteration or pipeline still rejects with it.
    content.on('error', () => undefined);
    this.current = content;
    if (this.abandoned) content.destroy();
    this.push({ path: event.path, kind: 'file', size: event.size, content });
  }

  onData(data: Buffer): void {
    const content = this.current;
    if (!content || content.destroyed) return;
    if (!content.push(data)) this.flow.pause();
  }

  onFileEnd(event: FsFileEndEvent): void {
    const content = this.current;
    this.current = null;
    if (content && !content.destroyed) {
      if (event.complete) content.push(null);
      // Padded or cut by the supervisor: never taken for the file's bytes.
      else content.destroy(new SandboxFileChangedError(event.path));
    }
    this.flow.resume();
  }

  // The sandbox is gone: the entries end with `error`.
  fail(error: Error): void {
    this.failure = error;
    this.current?.destroy(error);
    this.current = null;
    this.wakeUp();
  }

  async *entries(): AsyncGenerator<SessionTreeEntry> {
    try {
      for (let given = 0; given < this.expected; given++) {
        while (this.ready.length === 0) {
          if (this.failure) throw this.failure;
          await new Promise<void>((resolve) => (this.wake = resolve));
        }
        const entry = this.ready.shift()!;
        yield entry;
        // Whatever the reader left of this file is dropped as it arrives.
        const content = entry.content as Readable;
        if (!content.readableEnded && !content.destroyed) {
          content.destroy();
          this.flow.resume();
        }
      }
    } finally {
      // The reader stopped early: the rest of the answers still arrive, and go nowhere.
      this.abandoned = true;
      this.current?.destroy();
      this.flow.resume();
    }
  }

  private push(entry: SessionTreeEntry): void {
    this.ready.push(entry);
    this.wakeUp();
  }

  private wakeUp(): void {
    const wake = this.wake;
    this.wake = null;
    wake?.();
  }
}
