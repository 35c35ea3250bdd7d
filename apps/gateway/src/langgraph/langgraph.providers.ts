import type { Provider, Type } from '@nestjs/common';
import { ApiKeyAuthGuard } from '../auth/api-key-auth.guard.js';
import { AgentRuntimeAccess } from './agent-runtime.access.js';
import { AGENT_THREADS_REPOSITORY } from './agent-threads.repository.js';
import { AssistantsController } from './assistants.controller.js';
import { LangGraphAssistantsService } from './langgraph-assistants.service.js';
import { LangGraphRunsService } from './langgraph-runs.service.js';
import { LangGraphThreadsService } from './langgraph-threads.service.js';
import { RunsController } from './runs.controller.js';
import { ThreadsController } from './threads.controller.js';
import { TypeOrmAgentThreadsRepository } from './typeorm-agent-threads.repository.js';

// The LangGraph-compatible API (/assistants, /threads, /threads/:id/runs), spread into
// the gateway module. It needs, from that module: TenantsService (the auth guard), the
// TypeORM connection, and the agent bound to AGENT_RUNTIME (@drydock/agents). Without an
// AGENT_RUNTIME provider the gateway still starts and these routes answer 503
// AGENT_UNAVAILABLE wherever they need the graph.
export const LANGGRAPH_CONTROLLERS: Type[] = [AssistantsController, ThreadsController, RunsController];

export const LANGGRAPH_PROVIDERS: Provider[] = [
  { provide: AGENT_THREADS_REPOSITORY, useClass: TypeOrmAgentThreadsRepository },
  AgentRuntimeAccess,
  LangGraphAssistantsService,
  LangGraphThreadsService,
  LangGraphRunsService,
  ApiKeyAuthGuard,
];
