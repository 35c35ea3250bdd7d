import type { BaseLanguageModelInput } from '@langchain/core/language_models/base';
import type { AIMessageChunk, BaseMessage } from '@langchain/core/messages';
import type { Runnable } from '@langchain/core/runnables';
import type { StructuredToolInterface } from '@langchain/core/tools';
import type { Backend, SandboxBackend } from '../backends/backend-protocol.js';
import type { RunScope } from './run-scope.js';

// One agent as a run uses it: its instructions, its model with its tools bound, the tool
// instances by name (built-ins are shared by every agent; Python tools per definition)
// and the backend its file tools route through.
export interface ResolvedAgent {
  instructions: string;
  model: Runnable<BaseLanguageModelInput, AIMessageChunk | BaseMessage>;
  tools: ReadonlyMap<string, StructuredToolInterface>;
  backend: Backend;
  sandbox: SandboxBackend;
  // The template its threads' sessions start from; null: the platform image.
  template: string | null;
  // The hosts its threads' sessions may reach; null: no network.
  network: { allow: string[] } | null;
  // The isolation tier of its threads' sessions; null or absent: the tenant's default.
  tier?: 'runc' | 'gvisor' | null;
  // What its threads' sessions come to when idle; null or absent: the deployment's
  // SESSION_IDLE_ACTION.
  idleAction?: 'hibernate' | 'end' | null;
}

// Looks an agent up for a run (the default agent or a tenant's definition). Called by
// both nodes on every step, so implementations cache.
export interface AgentResolver {
  resolve(scope: RunScope): Promise<ResolvedAgent>;
}
