import { Inject, Injectable } from '@nestjs/common';
import type { SessionSpec } from '@drydock/execution';
import { SESSIONS_REPOSITORY, SessionsError, type SessionsRepository } from '@drydock/sessions';
import { newHostedSession, type HostedSession } from './hosted-session.js';

// The sessions this worker hosts, and the one-at-a-time order of each session's jobs.
// A session is looked up in PostgreSQL the first time one of its jobs reaches this
// worker (it may be unknown or have ended since the gateway sent the job); after that,
// the entry is the worker's truth until the session is stopped or reaped.
@Injectable()
export class HostedSessionRegistry {
  private readonly hosted = new Map<string, HostedSession>();

  constructor(@Inject(SESSIONS_REPOSITORY) private readonly sessions: SessionsRepository) {}

  get size(): number {
    return this.hosted.size;
  }

  ids(): ReadonlySet<string> {
    return new Set(this.hosted.keys());
  }

  all(): HostedSession[] {
    return [...this.hosted.values()];
  }

  get(sessionId: string): HostedSession | undefined {
    return this.hosted.get(sessionId);
  }

  // Whether `hosted` is still this worker's entry for its session (not stopped, reaped
  // or replaced while a job waited or a container started).
  isCurrent(hosted: HostedSession): boolean {
    return this.hosted.get(hosted.spec.sessionId) === hosted;
  }

  // The session's entry, created on its first job here. Throws SESSION_NOT_FOUND or
  // SESSION_ENDED (typed, so the caller gets that code) when the row says so.
  async acquire(spec: SessionSpec): Promise<HostedSession> {
    const existing = this.hosted.get(spec.sessionId);
    if (existing) return existing;
    const row = await this.sessions.findById(spec.tenantId, spec.sessionId);
    if (!row) throw SessionsError.notFound(spec.sessionId);
    if (row.status === 'ended') throw SessionsError.ended(spec.sessionId);
    // Another job of the session may have created it during the lookup.
    const raced = this.hosted.get(spec.sessionId);
    if (raced) return raced;
    // It had a container before, on this worker's previous life or another worker; a
    // hibernated one resumes from its checkpoint.
    const hosted = newHostedSession(spec, { stateLost: row.containerId !== null, resumeFrom: row.status === 'hibernated' ? row.hibernationId : null });
    this.hosted.set(spec.sessionId, hosted);
    return hosted;
  }

  remove(sessionId: string): HostedSession | undefined {
    const hosted = this.hosted.get(sessionId);
    this.hosted.delete(sessionId);
    return hosted;
  }

  removeAll(): HostedSession[] {
    const all = this.all();
    this.hosted.clear();
    return all;
  }

  // Runs `task` after every job of the session queued before it; a failed task does not
  // block the ones after it.
  serialize<T>(hosted: HostedSession, task: () => Promise<T>): Promise<T> {
    const next = hosted.tail.then(async () => {
      hosted.busy = true;
      try {
        return await task();
      } finally {
        hosted.busy = false;
        hosted.lastUsed = Date.now();
      }
    });
    hosted.tail = next.catch(() => undefined);
    return next;
  }
}
