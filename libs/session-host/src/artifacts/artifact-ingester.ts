import { Inject, Injectable, Logger } from '@nestjs/common';
import type { Readable } from 'node:stream';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import {
  ArtifactQuotaExceededError,
  ArtifactsService,
  BlobTooLargeError,
  toDescriptor,
  type ArtifactDescriptor,
  type ArtifactLineage,
  type StagedArtifact,
} from '@drydock/artifacts';
import { SandboxFileChangedError, type ArtifactListing, type Sandbox } from '@drydock/execution';

// Files up to this size are staged and recorded in groups (one transaction per group);
// larger ones stream and are recorded on their own. A group is recorded when it has
// GROUP_MAX_FILES files or GROUP_MAX_BYTES bytes, before a large file, and at the end.
// Per small file that saves a transaction (usage lock, blob row, artifact row, usage
// update: seven round trips and a WAL flush).
const GROUP_FILE_BYTES = 1024 * 1024;
const GROUP_MAX_FILES = 100;
const GROUP_MAX_BYTES = 16 * 1024 * 1024;

export interface IngestResult {
  artifacts: ArtifactDescriptor[];
  skipped: { path: string; reason: string }[];
}

// Turns what a run left in /session/artifacts/ into artifacts: streamed out of the
// sandbox by name (Sandbox.exportFiles: over the host channel, never a host path),
// regular files only, each hashed and capped while it streams, stored once per content,
// recorded with its lineage (small files in groups, one transaction each, in the order
// they were listed); then the folder is emptied of what was taken or refused (it is an
// outbox, not storage). A file that would take the tenant past its artifact quota is
// refused (`quota`) and the run stands; when its listed size already shows it would, it
// is not read at all, and when the size it arrives with does, its bytes are dropped.
@Injectable()
export class ArtifactIngester {
  private readonly logger = new Logger(ArtifactIngester.name);

  constructor(
    private readonly artifacts: ArtifactsService,
    @Inject(APP_CONFIG) private readonly config: AppConfig,
  ) {}

  async ingest(sandbox: Sandbox, tenantId: string, lineage: ArtifactLineage, listing: ArtifactListing): Promise<IngestResult> {
    const result: IngestResult = { artifacts: [], skipped: [] };
    if (listing.files.length === 0 && listing.skipped.length === 0) return result;
    const maxBytes = this.config.artifacts.maxFileBytes;
    const wanted = new Set(listing.files.map((f) => f.path));
    const done = new Set<string>();
    for (const { path, reason } of listing.skipped) {
      result.skipped.push({ path, reason });
      // Not-a-file entries are removed (unlinking never opens them); names that cannot
      // be spelled or folders that cannot be read stay.
      if (reason !== 'encoding' && reason !== 'unreadable') done.add(path);
    }
    if (wanted.size > 0) {
      // Staged small files waiting to be recorded together.
      let group: StagedArtifact[] = [];
      let groupBytes = 0;
      try {
        const policy = await this.artifacts.policyOf(tenantId);
        // A running estimate, so that a file clearly over quota is not streamed at all;
        // the store's own check, under the tenant's lock, is the one that counts.
        const usage = await this.artifacts.usage(tenantId);
        const fits = (estimate: typeof usage, size: number) =>
          estimate.count + 1 <= policy.maxCount && estimate.bytes + size <= policy.maxBytes;
        // Files the listing already shows past that estimate are not asked for: their
        // bytes would cross the channel only to be dropped. They leave the outbox as the
        // ones refused while streaming do. Listed sizes may be stale; the checks below,
        // on the sizes read, still apply to what is asked for.
        const listed = { ...usage };
        for (const { path, size } of listing.files) {
          if (size > maxBytes) continue; // refused by the sandbox without its bytes
          if (fits(listed, size)) {
            listed.count += 1;
            listed.bytes += size;
            continue;
          }
          wanted.delete(path);
          done.add(path);
          result.skipped.push({ path, reason: 'quota' });
        }
        const flush = async () => {
          const staged = group;
          group = [];
          groupBytes = 0;
          if (staged.length === 0) return;
          let stored: Awaited<ReturnType<ArtifactsService['store']>>;
          try {
            stored = await this.artifacts.store(tenantId, lineage, staged, policy);
          } catch (error) {
            // Left in the folder: the next run lists them again.
            for (const { path } of staged) {
              done.delete(path);
              result.skipped.push({ path, reason: 'ingest-error' });
            }
            throw error;
          }
          for (const [index, outcome] of stored.entries()) {
            if (outcome instanceof ArtifactQuotaExceededError) {
              result.skipped.push({ path: staged[index]!.path, reason: 'quota' });
              // The estimate counted it when it was staged.
              usage.count -= 1;
              usage.bytes -= staged[index]!.blob.size;
            } else result.artifacts.push(toDescriptor(outcome));
          }
        };
        // A file that failed while it was stored: skipped for its own reason, or the store
        // failed (ingest-error, rethrown: the files after it stay in the outbox too).
        const refuse = (path: string, error: unknown) => {
          const refusal = fileRefusalOf(error);
          if (!refusal?.refused) done.delete(path);
          result.skipped.push({ path, reason: refusal?.reason ?? 'ingest-error' });
          if (!refusal) throw error;
        };
        try {
          const requested = [...wanted];
          for await (const entry of requested.length ? sandbox.exportFiles(requested, { maxFileBytes: maxBytes }) : []) {
            if (!wanted.delete(entry.path)) continue;
            if (entry.kind === 'vanished' || entry.kind === 'unreadable') {
              // Gone since the listing, or not readable: nothing to take or remove.
              result.skipped.push({ path: entry.path, reason: entry.kind });
              continue;
            }
            done.add(entry.path);
            if (entry.kind !== 'file') {
              // It changed kind after the listing (a background process), or is over the
              // size limit: refused all the same.
              result.skipped.push({ path: entry.path, reason: entry.kind });
              continue;
            }
            if (entry.size > maxBytes) {
              result.skipped.push({ path: entry.path, reason: 'too-large' });
              continue;
            }
            if (!fits(usage, entry.size)) {
              result.skipped.push({ path: entry.path, reason: 'quota' });
              continue;
            }
            const content = entry.content as Readable;
            if (entry.size > GROUP_FILE_BYTES) {
              // Large files stream on their own, after what was staged before them.
              await flush();
              try {
                const record = await this.artifacts.ingest(tenantId, lineage, entry.path, content, { maxBytes, policy });
                usage.count += 1;
                usage.bytes += record.size;
                result.artifacts.push(toDescriptor(record));
              } catch (error) {
                refuse(entry.path, error);
              }
              continue;
            }
            let staged: StagedArtifact;
            try {
              staged = await this.artifacts.stage(entry.path, content, { maxBytes, expectedBytes: entry.size });
            } catch (error) {
              refuse(entry.path, error);
              continue;
            }
            group.push(staged);
            groupBytes += staged.blob.size;
            usage.count += 1;
            usage.bytes += staged.blob.size;
            if (group.length >= GROUP_MAX_FILES || groupBytes >= GROUP_MAX_BYTES) await flush();
          }
          await flush();
        } finally {
          // Staged but never recorded (the archive or a store failed).
          if (group.length > 0) {
            await this.artifacts.discard(group);
            for (const { path } of group) {
              done.delete(path);
              result.skipped.push({ path, reason: 'ingest-error' });
            }
          }
        }
        // Listed but gone by the time the archive was read.
        for (const path of wanted) result.skipped.push({ path, reason: 'vanished' });
      } catch (error) {
        this.logger.warn(`${describe(lineage)}: ingesting artifacts failed: ${(error as Error).message}`);
        // Left in the folder: the next run lists them again.
        for (const path of wanted) result.skipped.push({ path, reason: 'ingest-error' });
      }
    }
    if (done.size > 0) {
      await sandbox
        .deleteFiles([...done])
        .catch((error: Error) => this.logger.warn(`${describe(lineage)}: emptying /session/artifacts failed: ${error.message}`));
    }
    result.skipped.sort((a, b) => (a.path < b.path ? -1 : a.path > b.path ? 1 : 0));
    return result;
  }
}

// A file's own failure while it was stored, as the reason it is skipped, and whether it
// is refused (removed from the outbox) or left there for a later run; null when the
// failure is the store's.
function fileRefusalOf(error: unknown): { reason: string; refused: boolean } | null {
  if (error instanceof BlobTooLargeError) return { reason: 'too-large', refused: true };
  if (error instanceof ArtifactQuotaExceededError) return { reason: 'quota', refused: true };
  // Still being written (code running in the background): listed again after the next run.
  if (error instanceof SandboxFileChangedError) return { reason: 'changing', refused: false };
  return null;
}

function describe(lineage: ArtifactLineage): string {
  return 'batchId' in lineage ? `${lineage.batchId}[${lineage.batchItem}]` : lineage.threadId;
}
