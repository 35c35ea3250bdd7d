import { type DynamicModule, Module, type ModuleMetadata, type Provider, type Type } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { REDIS } from '@drydock/core';
import { PlatformMetrics } from '@drydock/metrics';
import { SANDBOX_EGRESS, SANDBOX_RUNTIME, type SandboxRuntime } from '@drydock/execution';
import { WorkerEgress } from './egress/worker-egress.js';
import { ArtifactIngester } from './artifacts/artifact-ingester.js';
import { BatchItemRunner } from './batch-items/batch-item-runner.js';
import { BatchSandboxPool } from './batch-items/batch-sandbox-pool.js';
import { SessionFileSync } from './files/session-file-sync.js';
import { HostedSessionRegistry } from './hosting/hosted-session.registry.js';
import { AbandonedSessionSweeper } from './lifecycle/abandoned-session.sweeper.js';
import { IdleReaper } from './lifecycle/idle-reaper.js';
import { SessionActivity } from './lifecycle/session-activity.js';
import { SessionLifecycle } from './lifecycle/session-lifecycle.service.js';
import { OrphanContainerSweeper } from './presence/orphan-container.sweeper.js';
import { WorkerHeartbeat } from './presence/worker-heartbeat.js';
import { ExecutionRunner } from './runs/execution-runner.js';
import { BackgroundProcesses } from './processes/background-processes.js';
import { TerminalRelay } from './terminals/terminal-relay.js';
import { RedisRunGuard } from './runs/redis-run-guard.js';
import { RUN_GUARD } from './runs/run-guard.js';
import { SessionCheckpoints } from './hibernation/session-checkpoints.js';
import { DatasetStager } from './sandboxes/dataset-stager.js';
import { SandboxProvisioner } from './sandboxes/sandbox-provisioner.js';
import { TemplatePools } from './sandboxes/template-pools.js';
import { WarmSandboxPool } from './sandboxes/warm-sandbox-pool.js';

const EXPORTED = [
  ExecutionRunner,
  BackgroundProcesses,
  TerminalRelay,
  BatchItemRunner,
  SessionLifecycle,
  IdleReaper,
  AbandonedSessionSweeper,
  OrphanContainerSweeper,
  WorkerHeartbeat,
  HostedSessionRegistry,
  WarmSandboxPool,
  TemplatePools,
  PlatformMetrics,
];

// Everything a worker needs to host sessions. The app chooses the sandbox runtime (the
// worker: the Docker one) and supplies, through `imports`, the modules that export the
// repositories, DatasetRegistry, VfsService, ArtifactsService and BatchItemLedger;
// ConfigModule and RedisModule are global.
@Module({})
export class SessionHostModule {
  static register(options: { runtime: Type<SandboxRuntime>; imports: NonNullable<ModuleMetadata['imports']> }): DynamicModule {
    const providers: Provider[] = [
      options.runtime,
      { provide: SANDBOX_RUNTIME, useExisting: options.runtime },
      WorkerEgress,
      { provide: SANDBOX_EGRESS, useExisting: WorkerEgress },
      { provide: RUN_GUARD, inject: [REDIS], useFactory: (redis: Redis) => new RedisRunGuard(redis) },
      SessionFileSync,
      ArtifactIngester,
      HostedSessionRegistry,
      DatasetStager,
      SessionCheckpoints,
      PlatformMetrics,
      WarmSandboxPool,
      TemplatePools,
      SandboxProvisioner,
      SessionActivity,
      SessionLifecycle,
      ExecutionRunner,
      BackgroundProcesses,
      TerminalRelay,
      IdleReaper,
      AbandonedSessionSweeper,
      OrphanContainerSweeper,
      WorkerHeartbeat,
      BatchSandboxPool,
      BatchItemRunner,
    ];
    return {
      module: SessionHostModule,
      imports: options.imports,
      providers,
      exports: [...EXPORTED, SANDBOX_RUNTIME],
    };
  }
}
