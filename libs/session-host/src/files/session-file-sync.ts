import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import type { ExecutionFiles, Sandbox, SessionChangeReport } from '@drydock/execution';
import { normalizePath, VfsError, VfsService, type ThreadScope } from '@drydock/vfs';

// Files per archive pushed into a sandbox, and bytes per archive (one DB read each).
const PUSH_BATCH_FILES = 500;
const PUSH_BATCH_BYTES = 16 * 1024 * 1024;
// Bytes read back from a sandbox per VFS transaction.
const PULL_BATCH_BYTES = 32 * 1024 * 1024;

// What the worker knows about one sandbox's /session: the thread revision it mirrors,
// the revisions its own pulls wrote (already in the container, not to be pushed back),
// and paths changed in the container that could not be read back yet (retried after
// the next run).
export interface FileSyncState {
  readonly sandboxId: string;
  revision: number;
  own: Set<number>;
  pending: Set<string>;
}

export function newFileSyncState(sandboxId: string): FileSyncState {
  // -1: nothing pushed yet; the first push copies every file of the thread.
  return { sandboxId, revision: -1, own: new Set(), pending: new Set() };
}

// Two-way mirror between a thread's files (libs/vfs) and its sandbox's /session
// (docs/decisions/004-session-volume-and-file-sync.md). The thread root `/` is
// `/session` in the container; `/session/artifacts/` is never mirrored.
@Injectable()
export class SessionFileSync {
  private readonly logger = new Logger(SessionFileSync.name);

  constructor(
    private readonly vfs: VfsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  // Brings /session up to the thread's current revision: deletes first (a path may
  // turn from file into directory or back), then the changed files in tar batches.
  // When nothing changed since the last push, the cost is one revision lookup.
  // `knownRevision`: the thread's revision as the caller already read it (the gateway, in
  // the statement that recorded the execution); when the sandbox holds exactly that one,
  // the lookup is skipped. The code then sees the files as of when the run was accepted,
  // or later.
  async push(scope: ThreadScope, sandbox: Sandbox, state: FileSyncState, knownRevision?: number): Promise<void> {
    if (state.revision >= 0 && knownRevision === state.revision) return;
    if (state.revision >= 0 && (await this.vfs.revision(scope)) === state.revision) return;
    const changes = await this.vfs.changesSince(scope, Math.max(state.revision, 0));
    if (changes.deletes.length > 0) {
      const outcome = await sandbox.deleteFiles(changes.deletes);
      for (const { path, reason } of outcome.refused) {
        // A directory the code made where the thread deleted a file, or a symlink in
        // the way: the container keeps it, and its next change report tells the thread.
        this.logger.warn(`${scope.threadId}: not deleting ${path} in the sandbox (${reason})`);
      }
    }
    const upserts = changes.upserts.filter((u) => !state.own.has(u.info.revision));
    for (const batch of batches(upserts, PUSH_BATCH_FILES, PUSH_BATCH_BYTES, (u) => u.info.size)) {
      const files = await this.vfs.readMany(scope, batch.map((u) => u.path));
      const { refused } = await sandbox.putFiles(files.map((f) => ({ path: f.info.path, content: f.content, modifiedAt: f.info.modifiedAt })));
      for (const { path, reason } of refused) {
        // A symlink or a file the code made where the thread has a folder, or a folder
        // where it has a file: the container keeps it, and its next change report tells
        // the thread.
        this.logger.warn(`${scope.threadId}: not writing ${path} in the sandbox (${reason})`);
      }
    }
    state.revision = changes.revision;
    state.own.clear();
  }

  // Mirrors what a run changed in /session into the thread: deletes, then the changed
  // regular files read back through the archive API in size-bounded transactions.
  // Never throws for a file: what cannot be mirrored is listed in `skipped` with why.
  async pull(
    scope: ThreadScope,
    sandbox: Sandbox,
    state: FileSyncState,
    report: SessionChangeReport,
  ): Promise<ExecutionFiles> {
    const files: ExecutionFiles = { changed: [], deleted: [], skipped: [...report.skipped] };
    if (report.truncated) files.truncated = true;
    const gone = new Set(report.deleted);
    for (const path of report.changed) state.pending.add(path);
    for (const path of gone) state.pending.delete(path);
    if (state.pending.size === 0 && gone.size === 0) return files;

    const deletable = [...gone].filter((path) => isMirrorable(path));
    if (deletable.length > 0) {
      const { deleted, revision } = await this.vfs.deleteMany(scope, deletable);
      if (revision !== null) state.own.add(revision);
      files.deleted = deleted;
    }

    const wanted: string[] = [];
    for (const path of state.pending) {
      if (isMirrorable(path)) wanted.push(path);
      else {
        state.pending.delete(path);
        files.skipped.push({ path, reason: 'invalid-path' });
      }
    }
    let batch: { path: string; content: Buffer }[] = [];
    let batchBytes = 0;
    const flush = async () => {
      if (batch.length === 0) return;
      const written = await this.write(scope, state, batch, files);
      for (const path of written) state.pending.delete(path);
      batch = [];
      batchBytes = 0;
    };
    try {
      for await (const read of sandbox.readFiles(wanted, { maxFileBytes: this.config.vfs.maxFileBytes })) {
        if ('skipped' in read) {
          // Still being written (by code running in the background): it stays pending,
          // and is read again after the next run.
          if (read.skipped === 'changing') {
            files.skipped.push({ path: read.path, reason: 'changing' });
            continue;
          }
          state.pending.delete(read.path);
          if (read.skipped !== 'vanished') files.skipped.push({ path: read.path, reason: read.skipped });
          continue;
        }
        batch.push(read);
        batchBytes += read.content.length;
        if (batchBytes >= PULL_BATCH_BYTES) await flush();
      }
      await flush();
    } catch (error) {
      // The sandbox or the database failed mid-way: what is still pending is retried
      // after the next run, and this run says so.
      this.logger.warn(`${scope.threadId}: reading files back failed: ${(error as Error).message}`);
      for (const path of state.pending) files.skipped.push({ path, reason: 'sync-error' });
    }
    files.changed.sort();
    files.skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return files;
  }

  // Writes a batch in one transaction; when the batch is refused as a whole, file by
  // file, so one bad file does not keep the others out. New files past the thread's file
  // limit are left out of the write (not refused one by one: a run can make 100,000) and
  // reported as `too-many-files`; they stay in the container only. Returns the paths
  // handled.
  private async write(
    scope: ThreadScope,
    state: FileSyncState,
    batch: { path: string; content: Buffer }[],
    files: ExecutionFiles,
  ): Promise<string[]> {
    try {
      const written = await this.vfs.writeMany(scope, batch, { pastFileLimit: 'skip' });
      if (written.length > 0) state.own.add(written[0]!.info.revision);
      files.changed.push(...written.map((w) => w.info.path));
      if (written.length < batch.length) {
        const kept = new Set(written.map((w) => w.info.path));
        for (const f of batch) if (!kept.has(f.path)) files.skipped.push({ path: f.path, reason: 'too-many-files' });
      }
      return batch.map((f) => f.path);
    } catch (error) {
      if (!(error instanceof VfsError)) throw error;
      if (batch.length === 1) {
        files.skipped.push({ path: batch[0]!.path, reason: skipReasonOf(error) });
        return [batch[0]!.path];
      }
    }
    const handled: string[] = [];
    for (const file of batch) handled.push(...(await this.write(scope, state, [file], files)));
    return handled;
  }
}

// The change report names paths relative to /session; they are thread paths as they
// are, unless the VFS would store them under another name (Unicode normalisation,
// length limits): those stay in the container only.
function isMirrorable(path: string): boolean {
  try {
    return normalizePath(path) === path;
  } catch {
    return false;
  }
}

function skipReasonOf(error: VfsError): string {
  switch (error.code) {
    case 'FILE_TOO_LARGE':
      return 'too-large';
    case 'QUOTA_EXCEEDED':
      return 'quota';
    case 'TOO_MANY_FILES':
      return 'too-many-files';
    default:
      return error.code.toLowerCase().replaceAll('_', '-');
  }
}

function* batches<T>(items: T[], maxItems: number, maxBytes: number, size: (item: T) => number): Generator<T[]> {
  let batch: T[] = [];
  let bytes = 0;
  for (const item of items) {
    if (batch.length > 0 && (batch.length >= maxItems || bytes + size(item) > maxBytes)) {
      yield batch;
      batch = [];
      bytes = 0;
    }
    batch.push(item);
    bytes += size(item);
  }
  if (batch.length > 0) yield batch;
}
