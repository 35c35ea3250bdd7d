import { Inject, Injectable, Optional } from '@nestjs/common';
import { AGENT_RUNTIME, type AgentRuntime } from '@drydock/agents';
import { LangGraphError } from './langgraph.errors.js';

// The agent as the LangGraph API sees it. The gateway starts without an agent runtime
// (none bound to AGENT_RUNTIME): thread bookkeeping still works and everything that
// needs the graph answers 503 AGENT_UNAVAILABLE.
@Injectable()
export class AgentRuntimeAccess {
  constructor(@Optional() @Inject(AGENT_RUNTIME) private readonly runtime: AgentRuntime | null = null) {}

  get available(): boolean {
    return this.runtime !== null;
  }

  get(): AgentRuntime {
    if (!this.runtime) throw LangGraphError.agentUnavailable();
    return this.runtime;
  }
}
