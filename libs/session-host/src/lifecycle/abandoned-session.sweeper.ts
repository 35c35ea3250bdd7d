import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { SANDBOX_RUNTIME, type SandboxRuntime } from '@drydock/execution';
import { SESSIONS_REPOSITORY, WORKER_REGISTRY, type SessionsRepository, type WorkerRegistry } from '@drydock/sessions';

// Sessions whose worker is gone are re-created on their next run; those nobody runs
// again would stay live forever (and count against the tenant's maximum). After the
// idle timeout they are ended, like an idle session on a live worker, and their bind
// folders (if any, and if on this host) removed.
@Injectable()
export class AbandonedSessionSweeper {
  private readonly logger = new Logger(AbandonedSessionSweeper.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WORKER_REGISTRY) private readonly workers: WorkerRegistry,
    @Inject(SESSIONS_REPOSITORY) private readonly sessions: SessionsRepository,
    @Inject(SANDBOX_RUNTIME) private readonly runtime: SandboxRuntime,
  ) {}

  async sweep(now = Date.now()): Promise<string[]> {
    const live = (await this.workers.listLive()).map((w) => w.id);
    const ended = await this.sessions.endAbandoned(live, new Date(now - this.config.worker.sessionIdleMs));
    if (ended.length) this.logger.log(`ended ${ended.length} sessions abandoned by stopped workers`);
    for (const sessionId of ended) {
      await this.runtime
        .releaseSession(sessionId)
        .catch((error: Error) => this.logger.warn(`removing the bind folder of ${sessionId} failed: ${error.message}`));
    }
    return ended;
  }
}
