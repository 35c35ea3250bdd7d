import {
  CheckpointRefusedError,
  type SandboxCheckpointFile,
  SandboxFileChangedError,
  type FsDeleteOutcome,
  type FsWriteOutcome,
  type RunOutcome,
  type RunRequest,
  type Sandbox,
  type SandboxRuntime,
  type SandboxSpec,
  type SessionFileIn,
  type SessionFileRead,
  type SessionTreeEntry,
} from '@drydock/execution';
import { mkdtemp, readFile, rm, writeFile } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Readable } from 'node:stream';
import type { TenantsRepository } from '@drydock/core';
import { InMemoryThreadFilesRepository, VfsService } from '@drydock/vfs';
import { makeConfig } from '../factories/config.factory.js';

export const okOutcome = (over: Partial<RunOutcome> = {}): RunOutcome => ({
  status: 'ok',
  stdout: '',
  stderr: '',
  truncated: false,
  result: null,
  error: null,
  stateLost: false,
  durationMs: 1,
  files: { changed: [], deleted: [], skipped: [] },
  artifacts: { files: [], skipped: [] },
  figures: [],
  ...over,
});

// A sandbox whose /session is a Map (path relative to /session -> bytes), for unit tests
// of the worker's session hosting and file sync. `behaviour` plays the code's part.
export class FakeSandbox implements Sandbox {
  alive = true;
  running = 0;
  maxConcurrent = 0;
  runs: RunRequest[] = [];
  readonly session = new Map<string, Buffer>();
  // Calls of the file operations, for asserting what crossed into the container.
  puts: string[][] = [];
  reads: string[][] = [];
  deletes: string[][] = [];
  // Makes the next readFiles throw after yielding this many files.
  failReadAfter: number | null = null;
  // Files the code is still writing: readFiles answers them as `changing`, and their
  // exportFiles stream fails as a real sandbox's does after the first bytes.
  readonly changing = new Set<string>();

  constructor(
    readonly id: string,
    private readonly behaviour: (s: FakeSandbox) => Promise<RunOutcome>,
  ) {}

  async run(request: RunRequest): Promise<RunOutcome> {
    this.runs.push(request);
    this.running++;
    this.maxConcurrent = Math.max(this.maxConcurrent, this.running);
    try {
      return await this.behaviour(this);
    } finally {
      this.running--;
    }
  }

  // Interrupts asked for, by run id; `behaviour` decides what they do.
  interrupts: string[] = [];

  interrupt(runId: string): boolean {
    if (!this.runs.some((r) => r.id === runId) || this.running === 0) return false;
    this.interrupts.push(runId);
    return true;
  }

  async putFiles(files: SessionFileIn[]): Promise<FsWriteOutcome> {
    this.puts.push(files.map((f) => f.path));
    for (const file of files) this.session.set(file.path, file.content);
    return { written: files.length, refused: [] };
  }

  async *readFiles(paths: string[], options: { maxFileBytes: number }): AsyncGenerator<SessionFileRead> {
    this.reads.push([...paths]);
    let yielded = 0;
    for (const path of paths) {
      if (this.failReadAfter !== null && yielded >= this.failReadAfter) {
        this.failReadAfter = null;
        throw new Error('the daemon went away');
      }
      const content = this.session.get(path);
      if (!content) yield { path, skipped: 'vanished' };
      else if (this.changing.has(path)) yield { path, skipped: 'changing' };
      else if (content.length > options.maxFileBytes) yield { path, skipped: 'too-large' };
      else yield { path, content };
      yielded++;
    }
  }

  async deleteFiles(paths: string[]): Promise<FsDeleteOutcome> {
    this.deletes.push([...paths]);
    const outcome: FsDeleteOutcome = { deleted: [], missing: [], refused: [] };
    for (const path of paths) (this.session.delete(path) ? outcome.deleted : outcome.missing).push(path);
    return outcome;
  }

  exports: string[][] = [];
  async *exportFiles(paths: string[], options: { maxFileBytes: number }): AsyncGenerator<SessionTreeEntry> {
    this.exports.push([...paths]);
    for (const path of paths) {
      const content = this.session.get(path);
      if (!content) yield { path, kind: 'vanished', size: 0, content: Readable.from([]) };
      else if (content.length > options.maxFileBytes) yield { path, kind: 'too-large', size: content.length, content: Readable.from([]) };
      else if (this.changing.has(path)) yield { path, kind: 'file', size: content.length, content: changingStream(path, content) };
      else yield { path, kind: 'file', size: content.length, content: Readable.from([content]) };
    }
  }

  // Recycling empties /session; `recycleProblems` makes it report not clean.
  recycles = 0;
  recycleProblems: string[] = [];
  async recycle() {
    this.recycles++;
    this.session.clear();
    return { clean: this.alive && this.recycleProblems.length === 0, problems: this.recycleProblems, durationMs: 1 };
  }

  async destroy() {
    this.alive = false;
  }
}

export class FakeRuntime implements SandboxRuntime {
  created: FakeSandbox[] = [];
  // The spec of each sandbox created, in order.
  specs: (SandboxSpec | undefined)[] = [];
  behaviour: (s: FakeSandbox) => Promise<RunOutcome> = async () => okOutcome();
  // Checkpoints are off unless a test turns them on; one is a small file naming its
  // sandbox, and a restore records what it read from it.
  checkpointing = false;
  restored: string[] = [];
  async create(spec?: SandboxSpec, options: { restoreFrom?: string } = {}) {
    if (options.restoreFrom) this.restored.push(await readFile(options.restoreFrom, 'utf8'));
    const sandbox = new FakeSandbox(`c${this.created.length + 1}`, (s) => this.behaviour(s));
    this.created.push(sandbox);
    this.specs.push(spec);
    return sandbox;
  }
  checkpointUnavailable(spec: Pick<SandboxSpec, 'tier' | 'storage'>) {
    return this.checkpointing && spec.tier === 'gvisor' ? null : 'the fake runtime has checkpoints off';
  }
  async checkpoint(sandbox: Sandbox): Promise<SandboxCheckpointFile> {
    if (!this.checkpointing) throw new CheckpointRefusedError('the fake runtime has checkpoints off');
    const dir = await mkdtemp(join(tmpdir(), 'fake-checkpoint-'));
    const path = join(dir, 'checkpoint.img');
    await writeFile(path, `checkpoint of ${sandbox.id}`);
    await sandbox.destroy();
    return { path, sizeBytes: Buffer.byteLength(`checkpoint of ${sandbox.id}`), remove: () => rm(dir, { recursive: true, force: true }) };
  }
  released: string[] = [];
  async releaseSession(sessionId: string) {
    this.released.push(sessionId);
  }
  async removeOrphans(_workerId?: string, _keep?: ReadonlySet<string>) {
    return 0;
  }
  async sandboxWorkers() {
    return [] as { workerId: string; newestCreatedAt: number }[];
  }
  async healthy() {
    return true;
  }
}

// A VfsService over the in-memory repository, with every tenant at default limits.
export function inMemoryVfs(env: Record<string, string> = {}) {
  const repo = new InMemoryThreadFilesRepository();
  const tenants: Pick<TenantsRepository, 'findById'> = {
    findById: async (id) => ({ id, name: id, limits: {}, createdAt: new Date(), updatedAt: new Date() }),
  };
  const config = makeConfig(env);
  return { vfs: new VfsService(repo, tenants as TenantsRepository, config), repo, config };
}

// A file's bytes as a sandbox sends one that is written meanwhile: some, then the error.
function changingStream(path: string, content: Buffer): Readable {
  return Readable.from(
    (async function* () {
      yield content.subarray(0, Math.ceil(content.length / 2));
      throw new SandboxFileChangedError(path);
    })(),
  );
}
