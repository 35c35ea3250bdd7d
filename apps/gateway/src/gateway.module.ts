import { type DynamicModule, Module } from '@nestjs/common';
import { APP_FILTER } from '@nestjs/core';
import { TerminusModule } from '@nestjs/terminus';
import { LoggerModule } from 'nestjs-pino';
import { gatewayLogging } from './http/request-logging.js';
import { ConfigModule, RedisModule, TenantRateLimiter, TenantsService } from '@drydock/core';
import { JOB_DISPATCHER } from '@drydock/execution';
import { PlatformDataModule, SnapshotsService, SessionCommandsService, SessionExecutionsService, SessionProcessesService, SessionsService, SessionTerminalsService } from '@drydock/sessions';
import { VfsModule } from '@drydock/vfs';
import { ArtifactsModule } from '@drydock/artifacts';
import { BatchesModule } from '@drydock/batches';
import {
  AgentDefinitionsModule,
  AgentDefinitionsService,
  PYTHON_SCHEMA_DERIVER,
  SessionPythonSchemaDeriver,
  TEMPLATE_NAMES,
  TenantCheckpointsRepository,
} from '@drydock/agents';
import { TemplatesService } from '@drydock/templates';
import { ArtifactLinks } from './artifacts/artifact-links.service.js';
import { ArtifactsController, SignedArtifactsController } from './artifacts/artifacts.controller.js';
import { AdminOperationsController } from './admin/admin-operations.controller.js';
import { AdminExecutionsController } from './admin/admin-executions.controller.js';
import { AdminUsageController } from './admin/admin-usage.controller.js';
import { AdminEgressController } from './egress/admin-egress.controller.js';
import { UsageRepository } from './admin/usage.repository.js';
import { AdminTenantsController } from './admin/admin-tenants.controller.js';
import { TenantLifecycleService } from './admin/tenant-lifecycle.service.js';
import { AgentsController } from './agents/agents.controller.js';
import { BatchesController } from './batches/batches.controller.js';
import { AdminTemplatesController, TemplatesController } from './templates/templates.controller.js';
import { AdminAuthGuard } from './auth/admin-auth.guard.js';
import { TenantAuthGuard } from './auth/tenant-auth.guard.js';
import { CommandsController } from './commands/commands.controller.js';
import { ProcessesController } from './commands/processes.controller.js';
import { PtyTokensController } from './terminals/pty-tokens.controller.js';
import { ExecutionsController } from './executions/executions.controller.js';
import { FilesController } from './files/files.controller.js';
import { HealthController } from './health/health.controller.js';
import { DrydockMcpServer } from './mcp/drydock-mcp.server.js';
import { MetricsController } from './metrics/metrics.controller.js';
import { PlatformMetrics } from '@drydock/metrics';
import { McpController } from './mcp/mcp.controller.js';
import { PlatformHealthIndicators } from './health/platform-health.indicators.js';
import { ErrorResponseFilter } from './http/error-response.filter.js';
import { RedisJobDispatcher } from './queue/redis-job-dispatcher.js';
import { QueueDashboard } from './queue/queue-dashboard.js';
import { DatasetsController, SessionsController } from './sessions/sessions.controller.js';
import { SnapshotsController } from './sessions/snapshots.controller.js';
import { AGENT_RUNTIME, agentRuntimeProviders, type AgentRuntime, type ChatModelProvider } from '@drydock/agents';
import { LANGGRAPH_CONTROLLERS, LANGGRAPH_PROVIDERS } from './langgraph/langgraph.providers.js';

export interface GatewayOptions {
  // Replaces whatever is bound to AGENT_RUNTIME (tests of the LangGraph API run their own graph).
  agentRuntime?: AgentRuntime;
  // Replaces the configured chat models (tests and benches use a scripted model).
  chatModels?: ChatModelProvider;
}

@Module({
  imports: [
    ConfigModule,
    RedisModule,
    PlatformDataModule,
    VfsModule.register({ imports: [PlatformDataModule] }),
    ArtifactsModule.register({ imports: [PlatformDataModule] }),
    BatchesModule.register({ imports: [PlatformDataModule] }),
    AgentDefinitionsModule,
    TerminusModule.forRoot({ logger: false }),
    LoggerModule.forRootAsync(gatewayLogging),
  ],
  controllers: [
    AdminTenantsController,
    AdminOperationsController,
    AdminExecutionsController,
    AdminUsageController,
    AdminEgressController,
    SessionsController,
    SnapshotsController,
    DatasetsController,
    ExecutionsController,
    CommandsController,
    ProcessesController,
    PtyTokensController,
    FilesController,
    ArtifactsController,
    SignedArtifactsController,
    BatchesController,
    TemplatesController,
    AdminTemplatesController,
    HealthController,
    AgentsController,
    McpController,
    MetricsController,
    ...LANGGRAPH_CONTROLLERS,
  ],
  providers: [
    { provide: APP_FILTER, useClass: ErrorResponseFilter },
    RedisJobDispatcher,
    { provide: JOB_DISPATCHER, useExisting: RedisJobDispatcher },
    QueueDashboard,
    PlatformHealthIndicators,
    DrydockMcpServer,
    PlatformMetrics,
    TenantsService,
    TenantRateLimiter,
    TenantLifecycleService,
    UsageRepository,
    TenantCheckpointsRepository,
    SessionsService,
    SnapshotsService,
    SessionExecutionsService,
    SessionCommandsService,
    SessionProcessesService,
    SessionTerminalsService,
    TenantAuthGuard,
    AdminAuthGuard,
    ArtifactLinks,
    AgentDefinitionsService,
    { provide: TEMPLATE_NAMES, useExisting: TemplatesService },
    { provide: PYTHON_SCHEMA_DERIVER, useClass: SessionPythonSchemaDeriver },
    ...LANGGRAPH_PROVIDERS,
  ],
})
export class GatewayModule {
  // Providers given here are registered after the ones above, so they replace them.
  static forRoot(options: GatewayOptions = {}): DynamicModule {
    return {
      module: GatewayModule,
      providers: [
        ...agentRuntimeProviders(options.chatModels ?? null),
        ...(options.agentRuntime ? [{ provide: AGENT_RUNTIME, useValue: options.agentRuntime }] : []),
      ],
    };
  }
}
