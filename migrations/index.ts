import { DataSource } from 'typeorm';
import { CORE_ENTITIES, databaseOptions } from '@drydock/core';
import { EXECUTION_ENTITIES } from '@drydock/execution';
import { SESSIONS_ENTITIES } from '@drydock/sessions';
import { VFS_ENTITIES } from '@drydock/vfs';
import { TEMPLATE_ENTITIES } from '@drydock/templates';
import { EGRESS_ENTITIES } from '@drydock/egress';
import { InitialSchema1763800000000 } from './1763800000000-initial-schema.js';
import { ThreadFiles1763900000000 } from './1763900000000-thread-files.js';
import { Artifacts1764000000000 } from './1764000000000-artifacts.js';
import { ArtifactQuotas1764100000000 } from './1764100000000-artifact-quotas.js';
import { SessionDatasets1764200000000 } from './1764200000000-session-datasets.js';
import { Agents1764300000000 } from './1764300000000-agents.js';
import { AgentThreads1764400000000 } from './1764400000000-agent-threads.js';
import { Batches1764500000000 } from './1764500000000-batches.js';
import { TenantSuspension1764600000000 } from './1764600000000-tenant-suspension.js';
import { ExecutionsListing1764700000000 } from './1764700000000-executions-listing.js';
import { Usage1764800000000 } from './1764800000000-usage.js';
import { ExecutionsTenantViaSession1764900000000 } from './1764900000000-executions-tenant-via-session.js';
import { BatchCancelling1765000000000 } from './1765000000000-batch-cancelling.js';
import { ThreadFileCounts1765100000000 } from './1765100000000-thread-file-counts.js';
import { CommandExecutions1765200000000 } from './1765200000000-command-executions.js';
import { BackgroundProcesses1765300000000 } from './1765300000000-background-processes.js';
import { Templates1765400000000 } from './1765400000000-templates.js';
import { Egress1765500000000 } from './1765500000000-egress.js';
import { Hibernation1765600000000 } from './1765600000000-hibernation.js';
import { SessionIdleAction1765650000000 } from './1765650000000-session-idle-action.js';
import { AgentTiers1765700000000 } from './1765700000000-agent-tiers.js';
import { AgentIdleAction1765750000000 } from './1765750000000-agent-idle-action.js';

export const MIGRATIONS = [InitialSchema1763800000000, ThreadFiles1763900000000, Artifacts1764000000000, ArtifactQuotas1764100000000, SessionDatasets1764200000000, Agents1764300000000, AgentThreads1764400000000, Batches1764500000000, TenantSuspension1764600000000, ExecutionsListing1764700000000, Usage1764800000000, ExecutionsTenantViaSession1764900000000, BatchCancelling1765000000000, ThreadFileCounts1765100000000, CommandExecutions1765200000000, BackgroundProcesses1765300000000, Templates1765400000000, Egress1765500000000, Hibernation1765600000000, SessionIdleAction1765650000000, AgentTiers1765700000000, AgentIdleAction1765750000000];
export const ENTITIES = [...CORE_ENTITIES, ...SESSIONS_ENTITIES, ...EXECUTION_ENTITIES, ...VFS_ENTITIES, ...TEMPLATE_ENTITIES, ...EGRESS_ENTITIES];

// Applies pending migrations; safe to run on every start (it takes TypeORM's lock).
export async function runMigrations(databaseUrl: string): Promise<string[]> {
  const ds = new DataSource(databaseOptions({ databaseUrl }, ENTITIES, MIGRATIONS));
  await ds.initialize();
  try {
    const applied = await ds.runMigrations({ transaction: 'each' });
    return applied.map((m) => m.name);
  } finally {
    await ds.destroy();
  }
}
