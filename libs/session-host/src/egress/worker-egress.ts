import { Inject, Injectable, Logger, type OnModuleDestroy, type OnModuleInit } from '@nestjs/common';
import { APP_CONFIG, TENANTS_REPOSITORY, type AppConfig, type TenantsRepository } from '@drydock/core';
import {
  EGRESS_LOG_REPOSITORY,
  EgressProxy,
  EgressRecorder,
  EgressResolver,
  effectiveEntries,
  endpointOf,
  parseRanges,
  PlatformEndpoints,
  type EffectivePolicy,
  type EgressLogRepository,
  type EgressPolicySource,
  type EgressSubject,
} from '@drydock/egress';
import type { SandboxEgress, SandboxSpec } from '@drydock/execution';
import { PlatformMetrics } from '@drydock/metrics';
import { SESSIONS_REPOSITORY, type SessionsRepository } from '@drydock/sessions';

const PLATFORM_REFRESH_MS = 60_000;

// The worker's egress proxy (libs/egress): one Unix socket per sandbox with a network
// policy, each connection decided by the session's policy as stored now (so narrowing
// applies at once) within its tenant's current ceiling, every attempt logged in batches
// and counted in the metrics.
@Injectable()
export class WorkerEgress implements SandboxEgress, EgressPolicySource, OnModuleInit, OnModuleDestroy {
  private readonly logger = new Logger(WorkerEgress.name);
  private readonly recorder: EgressRecorder;
  private readonly platform: PlatformEndpoints;
  private readonly proxy: EgressProxy;
  private refreshTimer: NodeJS.Timeout | null = null;
  // Whose connections each open socket carries, by its sandbox's key (spec.sessionId).
  private readonly subjects = new Map<string, EgressSubject>();

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(SESSIONS_REPOSITORY) private readonly sessions: SessionsRepository,
    @Inject(TENANTS_REPOSITORY) private readonly tenants: TenantsRepository,
    @Inject(EGRESS_LOG_REPOSITORY) log: EgressLogRepository,
    metrics: PlatformMetrics,
  ) {
    const resolver = new EgressResolver(config.egress.resolve, config.egress.connectTimeoutMs);
    this.platform = new PlatformEndpoints(platformEndpoints(config), resolver);
    this.recorder = new EgressRecorder(log, (c) => metrics.egressConnection(c.verdict, c.bytesIn, c.bytesOut));
    this.proxy = new EgressProxy({
      policies: this,
      sink: this.recorder,
      resolver,
      platform: this.platform,
      connectTimeoutMs: config.egress.connectTimeoutMs,
      workerId: config.worker.id,
    });
  }

  async onModuleInit(): Promise<void> {
    await this.platform.refresh();
    this.refreshTimer = setInterval(() => {
      this.platform.refresh().catch((error: Error) => this.logger.warn(`resolving the platform's endpoints failed: ${error.message}`));
    }, PLATFORM_REFRESH_MS);
    this.refreshTimer.unref();
  }

  async onModuleDestroy(): Promise<void> {
    if (this.refreshTimer) clearInterval(this.refreshTimer);
    await this.proxy.closeAll();
    await this.recorder.flush();
  }

  // A session's connections are its own; a batch sandbox's are its batch's and the item
  // it serves (attribute() moves that on when it is recycled), decided by the batch's
  // policy as submitted.
  async open(spec: SandboxSpec, socketPath: string, owner: { uid: number; gid: number }) {
    const subject: EgressSubject = spec.batch
      ? { tenantId: spec.tenantId, sessionId: null, batchId: spec.batch.batchId, batchItem: spec.batch.item, ...(spec.network ? { fixedPolicy: spec.network } : {}) }
      : { tenantId: spec.tenantId, sessionId: spec.sessionId };
    const listener = await this.proxy.listen(socketPath, () => subject, owner);
    this.subjects.set(spec.sessionId, subject);
    return {
      socketPath: listener.socketPath,
      close: async () => {
        if (this.subjects.get(spec.sessionId) === subject) this.subjects.delete(spec.sessionId);
        await listener.close();
      },
    };
  }

  // The batch pool's word that the sandbox it created as `sandboxKey` (its spec's
  // sessionId) now serves item `item` of its batch; a sandbox without a socket is no-op.
  attribute(sandboxKey: string, item: number): void {
    const subject = this.subjects.get(sandboxKey);
    if (subject?.batchId) subject.batchItem = item;
  }

  // For each connection: the session's stored policy (null once it ended) within the
  // tenant's ceiling as it is now; no network for a suspended or deleted tenant.
  async policyFor(subject: EgressSubject): Promise<EffectivePolicy | null> {
    const [tenant, session] = await Promise.all([
      this.tenants.findById(subject.tenantId),
      subject.fixedPolicy || !subject.sessionId ? null : this.sessions.findById(subject.tenantId, subject.sessionId),
    ]);
    if (!tenant || tenant.suspendedAt) return null;
    const policy = subject.fixedPolicy ?? (session && session.status !== 'ended' ? session.network : null);
    if (!policy) return null;
    const ceiling = tenant.limits.network;
    return {
      entries: effectiveEntries(policy, ceiling),
      ranges: parseRanges([...this.config.egress.allowedRanges, ...(ceiling?.ranges ?? [])]),
    };
  }
}

// What no sandbox may reach: the databases, the registry, the gateway and this worker's
// operator port, and what the operator lists in EGRESS_DENY. PostgreSQL's, Redis's and
// the Docker API's default ports on this host are refused as well, for when the platform
// reaches them over Unix sockets and they listen on TCP too.
function platformEndpoints(config: AppConfig): { host: string; port: number }[] {
  const found = [
    { host: '127.0.0.1', port: 5432 },
    { host: '127.0.0.1', port: 6379 },
    // The Docker engine's API, should this host expose it on TCP.
    { host: '127.0.0.1', port: 2375 },
    { host: '127.0.0.1', port: 2376 },
    endpointOf(config.databaseUrl, 5432),
    endpointOf(config.redisUrl, 6379),
    endpointOf(config.templates.registry, 5000),
    endpointOf(config.templates.registryApiUrl, 80),
    { host: '127.0.0.1', port: config.gateway.port },
    { host: '127.0.0.1', port: config.worker.metricsPort },
    ...config.egress.deny.map((d) => endpointOf(d, 80)),
  ];
  return found.filter((e): e is { host: string; port: number } => e !== null && e.port > 0);
}
