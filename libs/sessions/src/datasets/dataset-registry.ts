import { Inject, Injectable } from '@nestjs/common';
import { lstat, readdir, readFile, realpath } from 'node:fs/promises';
import { join, posix, resolve, sep } from 'node:path';
import { APP_CONFIG, DrydockError, type AppConfig } from '@drydock/core';
import type { SessionFileIn } from '@drydock/execution';

// Dataset names: one path segment a tenant can spell, never a path.
export const DATASET_NAME_PATTERN = /^[A-Za-z0-9][A-Za-z0-9._-]{0,63}$/;
const DATASET_NAME_RULE = '1-64 letters, digits, ".", "_" or "-", starting with a letter or digit';

export type DatasetScope = 'tenant' | 'shared';

export interface DatasetEntry {
  name: string;
  scope: DatasetScope;
}

export interface ResolvedDataset extends DatasetEntry {
  // Real path on the host, inside the registry.
  hostPath: string;
}

export class DatasetsError extends DrydockError {
  static notConfigured() {
    return new DatasetsError(
      'DATASETS_NOT_CONFIGURED',
      'This deployment has no dataset registry; the operator must set DATASETS_DIR.',
      422,
    );
  }
  static invalidName(name: unknown) {
    return new DatasetsError('INVALID_DATASET_NAME', `Dataset name ${JSON.stringify(name)} is not valid: use ${DATASET_NAME_RULE}.`, 400);
  }
  static notFound(name: string) {
    return new DatasetsError('DATASET_NOT_FOUND', `No dataset named "${name}" is available to this tenant.`, 422);
  }
  static tooLarge(name: string, maxBytes: number) {
    return new DatasetsError(
      'DATASET_TOO_LARGE',
      `Dataset "${name}" is larger than the ${maxBytes} bytes a session may stage; mount it read-only (mode "local_ro") instead.`,
      422,
    );
  }
}

// The operator's dataset registry, a folder on the Docker host:
//   <DATASETS_DIR>/shared/<name>/             visible to every tenant
//   <DATASETS_DIR>/tenants/<tenantId>/<name>/ visible to that tenant (wins over shared)
// Tenants only ever name a dataset; the host path is resolved here and must stay
// inside the registry after symlinks are followed.
@Injectable()
export class DatasetRegistry {
  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {}

  get configured(): boolean {
    return this.config.datasets.dir !== undefined;
  }

  async list(tenantId: string): Promise<DatasetEntry[]> {
    const root = await this.root();
    const found = new Map<string, DatasetScope>();
    for (const [scope, dir] of this.scopes(root, tenantId)) {
      const names = await readdir(dir).catch(() => [] as string[]);
      for (const name of names) {
        if (!found.has(name) && DATASET_NAME_PATTERN.test(name) && (await this.confined(dir, join(dir, name)))) {
          found.set(name, scope);
        }
      }
    }
    return [...found].map(([name, scope]) => ({ name, scope })).sort((a, b) => (a.name < b.name ? -1 : 1));
  }

  async resolve(tenantId: string, name: string): Promise<ResolvedDataset> {
    if (typeof name !== 'string' || !DATASET_NAME_PATTERN.test(name)) throw DatasetsError.invalidName(name);
    const root = await this.root();
    for (const [scope, dir] of this.scopes(root, tenantId)) {
      const hostPath = await this.confined(dir, join(dir, name));
      if (hostPath) return { name, scope, hostPath };
    }
    throw DatasetsError.notFound(name);
  }

  // Total bytes of the dataset's regular files (what staging would copy).
  async sizeOf(dataset: ResolvedDataset): Promise<number> {
    let total = 0;
    const walk = async (dir: string): Promise<void> => {
      for (const name of await readdir(dir)) {
        const stat = await lstat(join(dir, name));
        if (stat.isDirectory()) await walk(join(dir, name));
        else if (stat.isFile()) total += stat.size;
      }
    };
    await walk(dataset.hostPath);
    return total;
  }

  // Refuses a staged dataset bigger than a session may take, before anything is stored.
  async assertStageable(dataset: ResolvedDataset): Promise<void> {
    const max = this.config.datasets.maxStagedBytes;
    if ((await this.sizeOf(dataset)) > max) throw DatasetsError.tooLarge(dataset.name, max);
  }

  // The dataset's regular files as files under /data/<name>/ of the session, for
  // staging. Symlinks and special files are left out (never followed); past
  // `maxBytes` in total it refuses.
  async filesOf(dataset: ResolvedDataset, maxBytes = this.config.datasets.maxStagedBytes): Promise<SessionFileIn[]> {
    const files: SessionFileIn[] = [];
    let total = 0;
    const walk = async (dir: string, rel: string): Promise<void> => {
      for (const name of (await readdir(dir)).sort()) {
        const path = join(dir, name);
        const stat = await lstat(path);
        if (stat.isDirectory()) await walk(path, posix.join(rel, name));
        else if (stat.isFile()) {
          total += stat.size;
          if (total > maxBytes) throw DatasetsError.tooLarge(dataset.name, maxBytes);
          files.push({ path: posix.join('/data', dataset.name, rel, name), content: await readFile(path), modifiedAt: stat.mtime });
        }
      }
    };
    await walk(dataset.hostPath, '');
    return files;
  }

  private async root(): Promise<string> {
    const dir = this.config.datasets.dir;
    if (!dir) throw DatasetsError.notConfigured();
    return realpath(resolve(dir)).catch(() => {
      throw DatasetsError.notConfigured();
    });
  }

  private scopes(root: string, tenantId: string): [DatasetScope, string][] {
    return [
      ['tenant', join(root, 'tenants', tenantId)],
      ['shared', join(root, 'shared')],
    ];
  }

  // The real path of a dataset folder if it is a directory inside its scope's folder
  // (a link from shared/ into another tenant's folder does not count).
  private async confined(scopeDir: string, path: string): Promise<string | null> {
    const scopeReal = await realpath(scopeDir).catch(() => null);
    const real = await realpath(path).catch(() => null);
    if (!scopeReal || !real || !real.startsWith(scopeReal + sep)) return null;
    const stat = await lstat(real).catch(() => null);
    return stat?.isDirectory() ? real : null;
  }
}
