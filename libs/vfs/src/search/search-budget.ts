import { performance } from 'node:perf_hooks';
import type vm from 'node:vm';
import { VfsError } from '../vfs.errors.js';

// The time one search may spend matching a tenant's pattern in this process (a regex, or
// a glob that can backtrack), summed over every file or path it tests. Only the time in
// the matcher counts: that is the time the event loop is held for every other tenant.
// Reading files between tests does not (a slow disk or a busy machine is not the
// pattern's fault). Past the budget, the search fails with SEARCH_TIMEOUT.
export class SearchBudget {
  private spentMs = 0;

  constructor(
    private readonly pattern: string,
    readonly ms: number,
  ) {}

  // Runs `script` in `context`, interrupted when the budget runs out.
  run(script: vm.Script, context: vm.Context): unknown {
    const remaining = this.ms - this.spentMs;
    if (remaining <= 0) throw VfsError.searchTimeout(this.pattern, this.ms);
    const started = performance.now();
    try {
      return script.runInContext(context, { timeout: Math.max(1, Math.ceil(remaining)) });
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') throw VfsError.searchTimeout(this.pattern, this.ms);
      throw error;
    } finally {
      this.spentMs += performance.now() - started;
    }
  }
}
