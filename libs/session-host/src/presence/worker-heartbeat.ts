import { hostname } from 'node:os';
import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, withTimeout, type AppConfig } from '@drydock/core';
import { SANDBOX_RUNTIME, type SandboxRuntime } from '@drydock/execution';
import { WORKER_REGISTRY, type WorkerRegistry, type WorkerState } from '@drydock/sessions';
import { HostedSessionRegistry } from '../hosting/hosted-session.registry.js';
import { SessionActivity } from '../lifecycle/session-activity.js';
import { WarmSandboxPool } from '../sandboxes/warm-sandbox-pool.js';

// The worker's presence in the registry the gateways place sessions with: one beat
// every WORKER_HEARTBEAT_MS, then the session-activity flush.
//
// The beat must not wait on anything that can hang: a slow Docker daemon once held it
// past its TTL and a live worker was declared lost. The daemon gets one heartbeat
// period to answer (no answer: dockerHealthy false); the flush runs after the beat and
// on its own, so a slow database delays neither the beat nor the next one; and a beat
// or a flush still going when the next is due makes that one skip it.
//
// The beat carries the worker's state (active, draining, drained: only active workers
// get new sessions) and brings an operator's drain request to whoever registered for it.
@Injectable()
export class WorkerHeartbeat {
  private readonly logger = new Logger('Worker');
  private readonly startedAt = new Date().toISOString();
  private beating = false;
  private flushing = false;
  private current: WorkerState = 'active';
  private lastDockerHealthy = false;
  private onDrainRequested: (() => void) | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SANDBOX_RUNTIME) private readonly runtime: SandboxRuntime,
    @Inject(WORKER_REGISTRY) private readonly workers: WorkerRegistry,
    private readonly hosted: HostedSessionRegistry,
    private readonly activity: SessionActivity,
    private readonly pool: WarmSandboxPool,
  ) {}

  get state(): WorkerState {
    return this.current;
  }

  // What the last beat found: whether Docker answered.
  get dockerHealthy(): boolean {
    return this.lastDockerHealthy;
  }

  // Announces the new state at once (placement reads it from the registry).
  async setState(state: WorkerState): Promise<void> {
    this.current = state;
    this.beating = false;
    await this.beat();
  }

  whenDrainRequested(callback: () => void): void {
    this.onDrainRequested = callback;
  }

  async beat(): Promise<void> {
    if (!this.beating) {
      this.beating = true;
      try {
        const { heartbeatMs } = this.config.worker;
        const dockerHealthy = await withTimeout(this.runtime.healthy(heartbeatMs), heartbeatMs, false);
        this.lastDockerHealthy = dockerHealthy;
        await this.workers.heartbeat(
          {
            id: this.config.worker.id,
            hostname: hostname(),
            capacity: this.config.worker.capacity,
            sessions: this.hosted.size,
            startedAt: this.startedAt,
            lastSeenAt: new Date().toISOString(),
            dockerHealthy,
            state: this.current,
            pool: this.pool.status,
          },
          this.config.worker.heartbeatTtlMs,
        );
        if (this.current === 'active' && this.onDrainRequested && (await this.workers.drainRequested(this.config.worker.id))) {
          this.logger.log('a drain was requested');
          this.onDrainRequested();
        }
      } catch (error) {
        this.logger.warn(`heartbeat failed: ${(error as Error).message}`);
      } finally {
        this.beating = false;
      }
    }
    if (!this.flushing) {
      this.flushing = true;
      try {
        await this.activity.flush();
      } catch (error) {
        this.logger.warn(`recording session activity failed: ${(error as Error).message}`);
      } finally {
        this.flushing = false;
      }
    }
  }

  deregister(): Promise<void> {
    return this.workers.deregister(this.config.worker.id);
  }
}
