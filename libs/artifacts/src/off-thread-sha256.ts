import { Worker } from 'node:worker_threads';

// SHA-256 of a stream computed on a thread of its own. Hashing costs about 1 ms per MB
// here, on the thread that also reads the sandbox's channel and writes the staging file:
// for a 100 MB artifact a third of the ingest. On another thread it runs beside them.
// Bytes go over in batches of BATCH_BYTES (one copy, then transferred, not cloned), and
// at most MAX_IN_FLIGHT_BYTES of a stream wait for the thread: past that, update()
// returns a promise that resolves once the thread caught up, for the stream to wait on.

const BATCH_BYTES = 1 << 20;
const MAX_IN_FLIGHT_BYTES = 8 << 20;

// The thread's code (CommonJS, evaluated): one running hash per stream id; every batch
// is acknowledged, the digest answered.
const THREAD_SOURCE = `
const { parentPort } = require('node:worker_threads');
const { createHash } = require('node:crypto');
const hashes = new Map();
parentPort.on('message', (m) => {
  if (m.op === 'update') {
    let hash = hashes.get(m.id);
    if (!hash) hashes.set(m.id, (hash = createHash('sha256')));
    hash.update(m.bytes);
    parentPort.postMessage({ id: m.id, hashed: m.bytes.byteLength });
  } else if (m.op === 'digest') {
    const hash = hashes.get(m.id);
    hashes.delete(m.id);
    parentPort.postMessage({ id: m.id, sha256: (hash ?? createHash('sha256')).digest('hex') });
  } else if (m.op === 'drop') {
    hashes.delete(m.id);
  }
});`;

type ThreadMessage = { id: number; hashed: number } | { id: number; sha256: string };

export interface StreamSha256 {
  // Takes the chunk (copied before it returns); a promise when the thread is behind.
  update(chunk: Buffer): Promise<void> | undefined;
  // The hex digest of every chunk given; update() must not be called after it.
  digest(): Promise<string>;
  // Forgets the stream (an abandoned stage); safe to call at any time, and twice.
  drop(): void;
}

interface Stream {
  inFlight: number;
  // What the stream's caller waits on, if anything: the thread catching up (update) or
  // the digest. One at a time, as the caller waits for each before going on.
  waiting: { for: 'catch-up' | 'digest'; resolve: (sha256: string) => void; reject: (error: Error) => void } | null;
  failed: (error: Error) => void;
}

export class OffThreadSha256 {
  private worker: Worker | null = null;
  private nextId = 1;
  private readonly streams = new Map<number, Stream>();

  begin(): StreamSha256 {
    const worker = this.thread();
    const id = this.nextId++;
    let parts: Buffer[] = [];
    let partBytes = 0;
    let failure: Error | null = null;
    let finished = false;
    const stream: Stream = {
      inFlight: 0,
      waiting: null,
      failed: (error) => {
        failure ??= error;
        stream.waiting?.reject(error);
      },
    };
    const wait = (what: 'catch-up' | 'digest') => new Promise<string>((resolve, reject) => (stream.waiting = { for: what, resolve, reject }));
    this.streams.set(id, stream);
    if (this.streams.size === 1) worker.ref();
    const alive = () => {
      if (failure) throw failure;
      if (this.worker !== worker) throw new Error('the hashing thread stopped');
    };
    const send = () => {
      if (partBytes === 0) return;
      // A copy: the chunks also go to the staging file. Past 4 KiB the copy has its own
      // ArrayBuffer (smaller ones come from Node's pool), which is then transferred.
      const batch = Buffer.concat(parts, partBytes);
      const bytes = new Uint8Array(batch.buffer, batch.byteOffset, batch.byteLength);
      const transfer = batch.byteOffset === 0 && batch.byteLength === batch.buffer.byteLength ? [batch.buffer as ArrayBuffer] : [];
      worker.postMessage({ op: 'update', id, bytes }, transfer);
      stream.inFlight += partBytes;
      parts = [];
      partBytes = 0;
    };
    return {
      update: (chunk) => {
        alive();
        if (finished) throw new Error('update after digest');
        if (chunk.length === 0) return undefined;
        parts.push(chunk);
        partBytes += chunk.length;
        if (partBytes < BATCH_BYTES) return undefined;
        send();
        if (stream.inFlight <= MAX_IN_FLIGHT_BYTES) return undefined;
        return wait('catch-up').then(() => undefined);
      },
      digest: () => {
        alive();
        finished = true;
        send();
        const digest = wait('digest');
        worker.postMessage({ op: 'digest', id });
        return digest;
      },
      drop: () => {
        if (!this.forget(id)) return;
        if (this.worker === worker) worker.postMessage({ op: 'drop', id });
      },
    };
  }

  // Stops the thread; streams under way fail.
  async close(): Promise<void> {
    const worker = this.worker;
    if (!worker) return;
    this.stopped(worker, new Error('the hashing thread was closed'));
    await worker.terminate();
  }

  private thread(): Worker {
    if (this.worker) return this.worker;
    const worker = new Worker(THREAD_SOURCE, { eval: true });
    worker.on('message', (message: ThreadMessage) => this.answer(message));
    worker.on('error', (error) => this.stopped(worker, error));
    worker.on('exit', (code) => this.stopped(worker, new Error(`the hashing thread exited (${code})`)));
    // Keeps the process alive only while a stream waits on it (begin/forget). After the
    // listeners: a 'message' listener refs the thread's port again.
    worker.unref();
    this.worker = worker;
    return worker;
  }

  private answer(message: ThreadMessage): void {
    const stream = this.streams.get(message.id);
    if (!stream) return;
    const waiting = stream.waiting;
    if ('sha256' in message) {
      this.forget(message.id);
      waiting?.resolve(message.sha256);
      return;
    }
    stream.inFlight -= message.hashed;
    if (waiting?.for === 'catch-up' && stream.inFlight <= MAX_IN_FLIGHT_BYTES / 2) {
      stream.waiting = null;
      waiting.resolve('');
    }
  }

  private forget(id: number): boolean {
    if (!this.streams.delete(id)) return false;
    if (this.streams.size === 0) this.worker?.unref();
    return true;
  }

  // The thread is gone: every stream it held fails; the next begin() starts another.
  private stopped(worker: Worker, error: Error): void {
    if (this.worker !== worker) return;
    this.worker = null;
    const streams = [...this.streams.values()];
    this.streams.clear();
    for (const stream of streams) stream.failed(error);
  }
}
