import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, newId, type AppConfig } from '@drydock/core';
import { BLOB_STORE, type BlobStore } from '@drydock/artifacts';
import {
  CheckpointRefusedError,
  SANDBOX_RUNTIME,
  type Sandbox,
  type SandboxCheckpointFile,
  type SandboxRuntime,
  type SandboxSpec,
  type SessionSpec,
} from '@drydock/execution';
import { SESSIONS_REPOSITORY, SessionsError, type CheckpointRecord, type SessionsRepository } from '@drydock/sessions';
import { createHash } from 'node:crypto';
import { createReadStream, createWriteStream } from 'node:fs';
import { mkdir, mkdtemp, readdir, rename, rm, stat } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { Transform } from 'node:stream';
import { pipeline } from 'node:stream/promises';
import { createGunzip, createGzip } from 'node:zlib';

// gzip's fastest level: a gVisor image is mostly the interpreter's heap and page
// tables, which it shrinks by about 3x (bench/hibernate) at a fraction of level 6's CPU.
const GZIP_LEVEL = 1;
// No checkpoint of a sandbox is larger than its memory limit and its in-memory folders.
const MAX_CHECKPOINT_BYTES = 64 * 1024 * 1024 * 1024;

export class CheckpointRestoreError extends Error {}

// Checkpoints of sessions' sandboxes in the artifact blob store (decision 018):
// compressed, named by the SHA-256 of the stored bytes, recorded with their tenant and
// session. A restore reads the session's own record (tenant-scoped), and the bytes must
// hash to its name before the runtime sees them.
@Injectable()
export class SessionCheckpoints {
  private readonly logger = new Logger(SessionCheckpoints.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SANDBOX_RUNTIME) private readonly runtime: SandboxRuntime,
    @Inject(SESSIONS_REPOSITORY) private readonly sessions: SessionsRepository,
    @Inject(BLOB_STORE) private readonly blobs: BlobStore,
  ) {}

  // Why this session's sandbox cannot be checkpointed here (CHECKPOINT_NOT_AVAILABLE).
  unavailable(spec: SessionSpec): string | null {
    return this.runtime.checkpointUnavailable(spec);
  }

  // Saves the sandbox and stores it as the session's hibernation (the session is then
  // `hibernated`, its container gone). SESSION_BUSY when it cannot be checkpointed now
  // (it runs on); a failure after the container went is the runtime's error, and the
  // caller must treat the state as lost.
  //
  // The image also stays on this worker, uncompressed (the local cache): a resume here
  // restores it without reading and decompressing the blob.
  async hibernate(spec: SessionSpec, sandbox: Sandbox): Promise<CheckpointRecord> {
    const file = await this.checkpointOf(spec, sandbox);
    try {
      const record = await this.store(spec, file, { kind: 'hibernation', expiresAt: null });
      await this.keepLocally(record.id, file.path);
      return record;
    } finally {
      await file.remove().catch(() => undefined);
    }
  }

  // The worker's own copy of the checkpoints it took, written by it alone (never in a
  // sandbox's reach), named by checkpoint id; restarted workers start with none.
  private get cacheDir(): string {
    return join(tmpdir(), 'drydock-checkpoint-cache', this.config.worker.id);
  }

  private cached(checkpointId: string): string {
    if (!/^[A-Za-z0-9_]+$/.test(checkpointId)) throw new Error(`unexpected checkpoint id ${checkpointId}`);
    return join(this.cacheDir, `${checkpointId}.img`);
  }

  private async keepLocally(checkpointId: string, path: string): Promise<void> {
    try {
      await mkdir(this.cacheDir, { recursive: true, mode: 0o700 });
      await rename(path, this.cached(checkpointId));
    } catch (error) {
      this.logger.warn(`the checkpoint ${checkpointId} is not kept on this worker: ${(error as Error).message}`);
    }
  }

  // Removes the local copies of checkpoints not in `keep` (hibernations still hosted here);
  // all of them without it (a worker's start, its drain).
  async sweepLocal(keep: ReadonlySet<string> = new Set()): Promise<number> {
    const names = await readdir(this.cacheDir).catch(() => [] as string[]);
    let removed = 0;
    for (const name of names) {
      if (keep.has(name.replace(/\.img$/, ''))) continue;
      await rm(join(this.cacheDir, name), { force: true });
      removed++;
    }
    return removed;
  }

  // A snapshot between runs: the sandbox is checkpointed (its container goes), the
  // image is stored as a snapshot of the session and, at the same time, `resume`
  // restores the session from it, so the session goes on as it was. The snapshot's
  // record; SNAPSHOT_QUOTA_EXCEEDED (nothing kept) past the tenant's quota.
  async snapshot(
    spec: SessionSpec,
    sandbox: Sandbox,
    options: { id: string; expiresAt: Date; quota: { maxCount: number; maxBytes: number } },
    resume: (restoreFrom: string) => Promise<void>,
  ): Promise<CheckpointRecord> {
    const file = await this.checkpointOf(spec, sandbox);
    try {
      const [stored, resumed] = await Promise.allSettled([
        this.store(spec, file, { kind: 'snapshot', id: options.id, expiresAt: options.expiresAt, quota: options.quota }),
        resume(file.path),
      ]);
      if (resumed.status === 'rejected') this.logger.warn(`${spec.sessionId} did not resume after its snapshot: ${(resumed.reason as Error).message}`);
      if (stored.status === 'rejected') throw stored.reason;
      return stored.value;
    } finally {
      await file.remove().catch(() => undefined);
    }
  }

  private async checkpointOf(spec: SessionSpec, sandbox: Sandbox): Promise<SandboxCheckpointFile> {
    try {
      return await this.runtime.checkpoint(sandbox);
    } catch (error) {
      if (error instanceof CheckpointRefusedError) throw SessionsError.checkpointBusy(spec.sessionId, error.message);
      throw error;
    }
  }

  private async store(
    spec: SessionSpec,
    file: SandboxCheckpointFile,
    what: { kind: CheckpointRecord['kind']; id?: string; expiresAt: Date | null; quota?: { maxCount: number; maxBytes: number } },
  ): Promise<CheckpointRecord> {
    const staged = await this.blobs.stage(createReadStream(file.path).pipe(createGzip({ level: GZIP_LEVEL })), MAX_CHECKPOINT_BYTES);
    const record = {
      id: what.id ?? newId('ckp'),
      sessionId: spec.sessionId,
      kind: what.kind,
      sha256: staged.sha256,
      sizeBytes: staged.size,
      tier: spec.tier ?? 'runc',
      image: spec.image ?? null,
      expiresAt: what.expiresAt,
    };
    const refusal = await this.sessions.recordCheckpoint(spec.tenantId, record, () => this.blobs.commit(staged), what.quota);
    if (refusal !== null) {
      await this.blobs.discard(staged);
      if (refusal === 'ended') throw SessionsError.ended(spec.sessionId);
      const quota = what.quota!;
      throw SessionsError.snapshotQuota(refusal, refusal === 'count' ? quota.maxCount : quota.maxBytes);
    }
    this.logger.log(`${what.kind} of ${spec.sessionId}: ${file.sizeBytes} bytes, ${staged.size} stored`);
    return { ...record, tenantId: spec.tenantId, createdAt: new Date() };
  }

  // The session's sandbox as its checkpoint saved it. CheckpointRestoreError when the
  // checkpoint is not the session's (another tenant's, another session's), is missing,
  // or its bytes do not hash to its name; the runtime's own error when it cannot restore.
  async restore(spec: SandboxSpec, checkpointId: string): Promise<{ sandbox: Sandbox; checkpoint: CheckpointRecord }> {
    const record = await this.sessions.findCheckpoint(spec.tenantId, checkpointId);
    if (!record) throw new CheckpointRestoreError(`checkpoint ${checkpointId} does not exist (for this tenant)`);
    if (record.tier !== (spec.tier ?? 'runc') || record.image !== (spec.image ?? null)) {
      throw new CheckpointRestoreError(`checkpoint ${checkpointId} was taken of a ${record.tier} sandbox of another image`);
    }
    // This worker took it: its own copy, already whole and never out of its hands.
    const local = this.cached(checkpointId);
    if (await stat(local).then((s) => s.isFile(), () => false)) {
      try {
        return { sandbox: await this.runtime.create(spec, { restoreFrom: local }), checkpoint: record };
      } finally {
        await rm(local, { force: true });
      }
    }
    const dir = await mkdtemp(join(tmpdir(), 'drydock-restore-'));
    try {
      const path = join(dir, 'checkpoint.img');
      const hash = createHash('sha256');
      const hashing = new Transform({
        transform(chunk: Buffer, _encoding, done) {
          hash.update(chunk);
          done(null, chunk);
        },
      });
      try {
        await pipeline(this.blobs.open(record.sha256), hashing, createGunzip(), createWriteStream(path, { mode: 0o600 }));
      } catch (error) {
        throw new CheckpointRestoreError(`checkpoint ${checkpointId} could not be read: ${(error as Error).message}`);
      }
      const actual = hash.digest('hex');
      if (actual !== record.sha256) {
        throw new CheckpointRestoreError(`checkpoint ${checkpointId} was altered (its bytes hash to ${actual.slice(0, 12)}…, not ${record.sha256.slice(0, 12)}…)`);
      }
      return { sandbox: await this.runtime.create(spec, { restoreFrom: path }), checkpoint: record };
    } finally {
      await rm(dir, { recursive: true, force: true });
    }
  }
}
