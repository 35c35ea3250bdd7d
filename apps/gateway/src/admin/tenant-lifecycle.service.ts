import { Inject, Injectable, Logger, Optional } from '@nestjs/common';
import { APP_CONFIG, TenantsService, type AppConfig, type TenantRecord } from '@drydock/core';
import { SessionsService } from '@drydock/sessions';
import { ArtifactsService } from '@drydock/artifacts';
import { BatchAdmission, BatchesService } from '@drydock/batches';
import { AGENT_RUNTIME, TenantCheckpointsRepository, type AgentRuntime } from '@drydock/agents';
import { AGENT_THREADS_REPOSITORY, type AgentThreadsRepository } from '../langgraph/agent-threads.repository.js';

export interface TenantRemoval {
  sessionsEnded: number;
  batchesCancelled: number;
  checkpointsDeleted: number;
  blobsRemoved: number;
}

// An operator's hold on a tenant, and its removal.
//
// Suspend: the tenant's API keys answer 403 TENANT_SUSPENDED (every gateway within
// AUTH_CACHE_TTL_MS), its live sessions end (their containers go), and none of its batch
// items is admitted; items already running finish. Resume lifts all of that.
//
// Delete: suspend first (nothing new starts), wait out the auth caches, end the
// sessions, cancel the batches and kill their running items, delete the agent's threads
// and then their checkpoints (a run still under way writes nothing once its thread is
// gone; this gateway drops its cached copies, other gateways theirs once idle for
// AGENT_CHECKPOINT_CACHE_IDLE_MS), then the tenant row, which takes every row the
// tenant owns with it (foreign keys ON DELETE CASCADE: keys, sessions, executions,
// thread files, artifacts, batches and items, agents, usage), and last the artifact
// blobs no other tenant references.
@Injectable()
export class TenantLifecycleService {
  private readonly logger = new Logger(TenantLifecycleService.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    private readonly tenants: TenantsService,
    private readonly sessions: SessionsService,
    private readonly batches: BatchesService,
    private readonly admission: BatchAdmission,
    private readonly artifacts: ArtifactsService,
    private readonly checkpoints: TenantCheckpointsRepository,
    @Inject(AGENT_THREADS_REPOSITORY) private readonly threads: AgentThreadsRepository,
    // None when the gateway runs without an agent.
    @Optional() @Inject(AGENT_RUNTIME) private readonly agents: AgentRuntime | null = null,
  ) {}

  async suspend(tenantId: string): Promise<TenantRecord> {
    const tenant = await this.tenants.setSuspended(tenantId, true);
    const ended = await this.sessions.endAllOf(tenantId, 'tenant-suspended');
    this.logger.log(`suspended ${tenantId} (${ended} sessions ended)`);
    return tenant;
  }

  async resume(tenantId: string): Promise<TenantRecord> {
    const tenant = await this.tenants.setSuspended(tenantId, false);
    // Its queued batch items are admitted again now, not at the next maintenance pass.
    await this.admission.admit(tenantId).catch((error: Error) => this.logger.warn(`admitting ${tenantId}'s items failed: ${error.message}`));
    return tenant;
  }

  async delete(tenantId: string): Promise<TenantRemoval> {
    await this.tenants.setSuspended(tenantId, true);
    // A request authenticated just before the suspension may still be under way on any
    // gateway; give it the auth cache's lifetime to start whatever it starts.
    await new Promise((r) => setTimeout(r, this.config.gateway.authCacheTtlMs));
    const sessionsEnded = await this.sessions.endAllOf(tenantId, 'tenant-deleted');
    const batchesCancelled = await this.cancelBatches(tenantId);
    // Threads before checkpoints: a run that wrote before its thread went is deleted
    // with the rest, and one that ends after writes nothing (LangGraphRunsService).
    await this.threads.deleteAllOf(tenantId);
    const checkpointsDeleted = await this.checkpoints.deleteTenant(tenantId);
    this.agents?.forgetTenant(tenantId);
    await this.tenants.deleteRecord(tenantId);
    const blobsRemoved = await this.artifacts.collectGarbage();
    const removal = { sessionsEnded, batchesCancelled, checkpointsDeleted, blobsRemoved };
    this.logger.log(`deleted ${tenantId}: ${JSON.stringify(removal)}`);
    return removal;
  }

  private async cancelBatches(tenantId: string): Promise<number> {
    let cancelled = 0;
    let before: string | undefined;
    for (;;) {
      const page = await this.batches.list(tenantId, { limit: 100, before });
      for (const batch of page.batches) {
        if (batch.status === 'queued' || batch.status === 'running') {
          await this.batches.cancel(tenantId, batch.id, { kill: true });
          cancelled++;
        } else if (batch.status === 'cancelling') {
          // Cancelled already (by its tenant, without kill), its running items were left
          // to end: they are killed too, as the tenant's containers must go.
          await this.batches.cancel(tenantId, batch.id, { kill: true });
        }
      }
      if (!page.next) return cancelled;
      before = page.next;
    }
  }
}
