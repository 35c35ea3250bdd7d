import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { SESSIONS_REPOSITORY, type SessionsRepository } from '@drydock/sessions';
import { HostedSessionRegistry } from '../hosting/hosted-session.registry.js';
import { SessionLifecycle } from './session-lifecycle.service.js';

// Ends the sessions of this worker that nobody used for SESSION_IDLE_TIMEOUT_MS: the
// hosted ones (their container goes), and those placed here whose container never came
// back (e.g. after a restart of this worker).
@Injectable()
export class IdleReaper {
  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SESSIONS_REPOSITORY) private readonly sessions: SessionsRepository,
    private readonly registry: HostedSessionRegistry,
    private readonly lifecycle: SessionLifecycle,
  ) {}

  async reap(now = Date.now()): Promise<string[]> {
    const idleMs = this.config.worker.sessionIdleMs;
    const reaped: string[] = [];
    for (const hosted of this.registry.all()) {
      if (hosted.busy || now - hosted.lastUsed < idleMs) continue;
      const { sessionId, tenantId } = hosted.spec;
      await this.lifecycle.stop(sessionId);
      await this.sessions.end(tenantId, sessionId, 'idle');
      reaped.push(sessionId);
    }
    for (const session of await this.sessions.listLiveOnWorker(this.config.worker.id)) {
      if (this.registry.get(session.id)) continue;
      if (now - new Date(session.lastUsedAt).getTime() >= idleMs) {
        await this.sessions.end(session.tenantId, session.id, 'idle');
        reaped.push(session.id);
      }
    }
    return reaped;
  }
}
