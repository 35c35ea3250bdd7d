import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { SESSIONS_REPOSITORY, type SessionsRepository } from '@drydock/sessions';
import { SessionCheckpoints } from '../hibernation/session-checkpoints.js';
import { HostedSessionRegistry } from '../hosting/hosted-session.registry.js';
import { SessionLifecycle } from './session-lifecycle.service.js';

export interface ReapedSessions {
  // Ended: idle past SESSION_IDLE_TIMEOUT_MS where they cannot hibernate (or with
  // SESSION_IDLE_ACTION=end), or hibernated past SESSION_HIBERNATED_RETENTION_MS.
  ended: string[];
  // Hibernated: idle past SESSION_HIBERNATE_AFTER_MS on a tier that can checkpoint.
  hibernated: string[];
}

// What becomes of this worker's unused sessions (docs/sessions.md): those that can be
// checkpointed hibernate after SESSION_HIBERNATE_AFTER_MS (SESSION_IDLE_ACTION=hibernate,
// the default), the others end after SESSION_IDLE_TIMEOUT_MS, their container gone, as do
// sessions placed here whose container never came back (e.g. after a restart of this
// worker). Hibernated sessions, on any worker, end after their retention; expired
// snapshots are deleted.
@Injectable()
export class IdleReaper {
  private readonly logger = new Logger(IdleReaper.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SESSIONS_REPOSITORY) private readonly sessions: SessionsRepository,
    private readonly registry: HostedSessionRegistry,
    private readonly lifecycle: SessionLifecycle,
    private readonly checkpoints: SessionCheckpoints,
  ) {}

  async reap(now = Date.now()): Promise<ReapedSessions> {
    const { sessionIdleMs, sessionIdleAction, sessionHibernateAfterMs, hibernatedRetentionMs } = this.config.worker;
    const reaped: ReapedSessions = { ended: [], hibernated: [] };
    for (const hosted of this.registry.all()) {
      if (hosted.busy) continue;
      const { sessionId, tenantId } = hosted.spec;
      const idle = now - hosted.lastUsed;
      if (hosted.resumeFrom && !hosted.sandbox) {
        // Hibernated here: nothing runs; the entry goes, the row keeps the checkpoint.
        if (idle >= sessionIdleMs) this.registry.remove(sessionId);
        continue;
      }
      if ((hosted.spec.idleAction ?? sessionIdleAction) === 'hibernate' && this.checkpoints.unavailable(hosted.spec) === null) {
        if (idle < sessionHibernateAfterMs) continue;
        try {
          await this.lifecycle.hibernate(hosted.spec);
          reaped.hibernated.push(sessionId);
        } catch (error) {
          // Busy now (a terminal open): tried again on the next pass.
          this.logger.warn(`idle session ${sessionId} did not hibernate: ${(error as Error).message}`);
        }
        continue;
      }
      if (idle < sessionIdleMs) continue;
      await this.lifecycle.stop(sessionId);
      await this.sessions.end(tenantId, sessionId, 'idle');
      reaped.ended.push(sessionId);
    }
    for (const session of await this.sessions.listLiveOnWorker(this.config.worker.id)) {
      if (this.registry.get(session.id) || session.status === 'hibernated') continue;
      if (now - new Date(session.lastUsedAt).getTime() >= sessionIdleMs) {
        await this.sessions.end(session.tenantId, session.id, 'idle');
        reaped.ended.push(session.id);
      }
    }
    reaped.ended.push(...(await this.sessions.endHibernatedBefore(new Date(now - hibernatedRetentionMs))));
    // Local copies of checkpoints whose sessions this worker no longer hosts.
    const hibernatedHere = new Set(this.registry.all().flatMap((h) => (h.resumeFrom ? [h.resumeFrom] : [])));
    await this.checkpoints.sweepLocal(hibernatedHere);
    // Expired snapshots go (their blobs to the artifact store's collection).
    const expired = await this.sessions.deleteExpiredSnapshots(new Date(now));
    if (expired > 0) this.logger.log(`deleted ${expired} expired snapshots`);
    return reaped;
  }
}
