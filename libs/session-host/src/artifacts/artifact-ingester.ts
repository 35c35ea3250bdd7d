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
} from '@drydock/artifacts';
import type { ArtifactListing, Sandbox } from '@drydock/execution';

export const ARTIFACTS_DIR = '/artifacts';

export interface IngestResult {
  artifacts: ArtifactDescriptor[];
  skipped: { path: string; reason: string }[];
}

// Turns what a run left in /session/artifacts/ into artifacts: streamed out through the
// Docker archive API (never a host path), regular files only, each hashed and capped
// while it streams, stored once per content, recorded with its lineage; then the
// folder is emptied of what was taken or refused (it is an outbox, not storage). A file
// that would take the tenant past its artifact quota is refused (`quota`) and the run
// stands; when the tar header already shows it would, its bytes are never read.
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
      try {
        const policy = await this.artifacts.policyOf(tenantId);
        // A running estimate, so that a file clearly over quota is not streamed at all;
        // the store's own check, under the tenant's lock, is the one that counts.
        const usage = await this.artifacts.usage(tenantId);
        for await (const entry of sandbox.exportTree(ARTIFACTS_DIR)) {
          if (!wanted.delete(entry.path)) continue;
          done.add(entry.path);
          if (entry.kind !== 'file') {
            // It changed kind after the listing (a background process): refused all the same.
            result.skipped.push({ path: entry.path, reason: entry.kind });
            continue;
          }
          if (entry.size > maxBytes) {
            result.skipped.push({ path: entry.path, reason: 'too-large' });
            continue;
          }
          if (usage.count + 1 > policy.maxCount || usage.bytes + entry.size > policy.maxBytes) {
            result.skipped.push({ path: entry.path, reason: 'quota' });
            continue;
          }
          try {
            const record = await this.artifacts.ingest(tenantId, lineage, entry.path, entry.content as Readable, { maxBytes, policy });
            usage.count += 1;
            usage.bytes += record.size;
            result.artifacts.push(toDescriptor(record));
          } catch (error) {
            if (error instanceof BlobTooLargeError) result.skipped.push({ path: entry.path, reason: 'too-large' });
            else if (error instanceof ArtifactQuotaExceededError) result.skipped.push({ path: entry.path, reason: 'quota' });
            else throw error;
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

function describe(lineage: ArtifactLineage): string {
  return 'batchId' in lineage ? `${lineage.batchId}[${lineage.batchItem}]` : lineage.threadId;
}
