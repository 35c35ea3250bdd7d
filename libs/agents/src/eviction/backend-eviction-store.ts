import { DrydockError } from '@drydock/core';
import type { Backend, BackendContext, StateFilesUpdate } from '../backends/backend-protocol.js';
import { mergeStateFiles } from '../backends/state-backend.js';
import { type EvictionStore, LARGE_TOOL_RESULTS_DIR } from './tool-result-eviction.js';

// An EvictionStore over the thread's backend. With state-backed storage the writes and
// deletes come back as state updates: they accumulate in `filesUpdate`, for the tool
// node to return with its messages.
export class BackendEvictionStore implements EvictionStore {
  filesUpdate: StateFilesUpdate = {};

  constructor(
    private readonly backend: Backend,
    private readonly ctx: BackendContext,
    private readonly dir = LARGE_TOOL_RESULTS_DIR,
  ) {}

  async write(path: string, content: string): Promise<void> {
    const result = await this.backend.write(this.current(), path, content, { overwrite: true });
    this.collect(result.filesUpdate);
  }

  async list(): Promise<{ path: string; modifiedAt: Date | null }[]> {
    try {
      const entries = await this.backend.ls(this.current(), this.dir);
      return entries.filter((e) => e.type === 'file').map((e) => ({ path: e.path, modifiedAt: e.modifiedAt }));
    } catch (error) {
      if (error instanceof DrydockError && error.code === 'FILE_NOT_FOUND') return [];
      throw error;
    }
  }

  async delete(path: string): Promise<void> {
    const result = await this.backend.delete(this.current(), path);
    this.collect(result.filesUpdate);
  }

  // The context with this store's own pending state changes applied, so a list after a
  // write sees the written file.
  private current(): BackendContext {
    if (!this.ctx.stateFiles && Object.keys(this.filesUpdate).length === 0) return this.ctx;
    return { ...this.ctx, stateFiles: mergeStateFiles(this.ctx.stateFiles ?? {}, this.filesUpdate) };
  }

  private collect(update: StateFilesUpdate | undefined): void {
    if (update) this.filesUpdate = { ...this.filesUpdate, ...update };
  }
}
