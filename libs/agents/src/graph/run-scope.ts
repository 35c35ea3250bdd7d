import type { RunnableConfig } from '@langchain/core/runnables';
import { DrydockError } from '@drydock/core';
import { CONFIG_AGENT_ID, CONFIG_TENANT_ID, CONFIG_THREAD_ID } from '../tools/tool-context.js';

// The tenant, Drydock thread and agent a run belongs to, from its RunnableConfig. The
// HTTP layer sets them from the caller's key and route only (never from the body).
export interface RunScope {
  tenantId: string;
  threadId: string;
  agentId: string;
}

export function runScopeOf(config: RunnableConfig | undefined): RunScope {
  const c = config?.configurable ?? {};
  const tenantId = c[CONFIG_TENANT_ID];
  const threadId = c[CONFIG_THREAD_ID];
  const agentId = c[CONFIG_AGENT_ID];
  if (typeof tenantId !== 'string' || typeof threadId !== 'string' || typeof agentId !== 'string') {
    throw new DrydockError('RUN_SCOPE_MISSING', 'An agent run must name its tenant, thread and agent in its config.', 500);
  }
  return { tenantId, threadId, agentId };
}
