import { Injectable, Logger } from '@nestjs/common';
import type { Sandbox, SandboxSpec, SessionSpec } from '@drydock/execution';
import { DatasetRegistry, type StagedDataset } from '@drydock/sessions';

// Datasets on the worker's side (docs/datasets.md): `local_ro` ones are resolved here,
// on the host that mounts them; `staged` ones are copied into /session/data/<name> of a
// running sandbox, when asked and again whenever the session gets a new container.
@Injectable()
export class DatasetStager {
  private readonly logger = new Logger(DatasetStager.name);

  constructor(private readonly datasets: DatasetRegistry) {}

  async readOnlyMounts(spec: SessionSpec): Promise<NonNullable<SandboxSpec['readOnlyMounts']>> {
    const mounts: NonNullable<SandboxSpec['readOnlyMounts']> = [];
    for (const dataset of spec.datasets ?? []) {
      if (dataset.mode !== 'local_ro') continue;
      const { hostPath } = await this.datasets.resolve(spec.tenantId, dataset.name);
      mounts.push({ name: dataset.name, hostPath });
    }
    return mounts;
  }

  // Under /session/data/<name>, as files of the session; they are not thread files
  // unless the code changes them. Throws the registry's typed errors (e.g. the operator
  // removed the dataset since the session asked for it).
  async stage(tenantId: string, sandbox: Sandbox, name: string): Promise<StagedDataset> {
    const files = await this.datasets.filesOf(await this.datasets.resolve(tenantId, name));
    const { refused } = await sandbox.putFiles(files);
    // Code of the session made something else of a path of the copy (a symlink, a folder).
    for (const { path, reason } of refused) this.logger.warn(`dataset ${name}: not staging ${path} into the sandbox (${reason})`);
    const taken = new Set(refused.map((r) => r.path));
    const staged = files.filter((f) => !taken.has(f.path));
    return { name, mode: 'staged', files: staged.length, bytes: staged.reduce((sum, f) => sum + f.content.length, 0) };
  }

  // Every staged dataset of the session into a new sandbox. Checked when the session
  // asked for it; should the operator have changed or removed one since, the session
  // still starts, without that copy.
  async restage(spec: SessionSpec, sandbox: Sandbox): Promise<void> {
    for (const dataset of spec.datasets ?? []) {
      if (dataset.mode !== 'staged') continue;
      await this.stage(spec.tenantId, sandbox, dataset.name).catch((error: Error) =>
        this.logger.warn(`re-staging dataset ${dataset.name} into ${spec.sessionId} failed: ${error.message}`),
      );
    }
  }
}
