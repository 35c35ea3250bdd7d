import { Inject, Injectable } from '@nestjs/common';
import { SESSIONS_REPOSITORY, type SessionsRepository } from '@drydock/sessions';

// Sessions used since the last flush. Their last_used_at is written in one statement
// per heartbeat, off the hot path; the sweep of abandoned sessions reads it.
@Injectable()
export class SessionActivity {
  private active = new Set<string>();

  constructor(@Inject(SESSIONS_REPOSITORY) private readonly sessions: SessionsRepository) {}

  get pending(): number {
    return this.active.size;
  }

  mark(sessionId: string): void {
    this.active.add(sessionId);
  }

  // On failure the ids are lost, which only ages those sessions by one period: they are
  // marked again by their next run, and the sweep waits a whole idle timeout.
  async flush(): Promise<void> {
    if (this.active.size === 0) return;
    const ids = [...this.active];
    this.active = new Set();
    await this.sessions.touchMany(ids);
  }
}
