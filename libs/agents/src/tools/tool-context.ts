import type { RunnableConfig } from '@langchain/core/runnables';
import { DrydockError } from '@drydock/core';
import type { Backend, SandboxBackend, StateFiles } from '../backends/backend-protocol.js';

// Tools are built once at start-up and serve every tenant and thread at once, so
// nothing about the caller lives in a tool instance: the tool node puts the call's
// context into the RunnableConfig it invokes the tool with, and each tool reads it
// back at call time (seed 001, context-aware tools).
//
// Graph-level keys (set by whoever starts a run, and checkpointed with it):
export const CONFIG_TENANT_ID = 'drydock_tenant_id';
export const CONFIG_THREAD_ID = 'drydock_thread_id';
export const CONFIG_AGENT_ID = 'drydock_agent_id';
// Per-call key, set by the tool node only for the duration of one tool invocation
// (never checkpointed: it carries live objects).
export const CONFIG_TOOL_CALL = 'drydock_tool_call';

export interface ToolCallContext {
  tenantId: string;
  threadId: string;
  toolCallId: string;
  // Where this agent's file tools read and write (its composite of routes; the
  // thread's VFS by default).
  backend: Backend;
  // Runs Python in the thread's session; the same files as the thread store.
  sandbox: SandboxBackend;
  // The template of the agent's sessions (its definition's); null: the platform image.
  template?: string | null;
  // The network policy of the agent's sessions (its definition's); null: no network.
  network?: { allow: string[] } | null;
  // The isolation tier of the agent's sessions (its definition's); null: the tenant's default.
  tier?: 'runc' | 'gvisor' | null;
  // What the agent's sessions come to when idle (its definition's); null: the
  // deployment's SESSION_IDLE_ACTION.
  idleAction?: 'hibernate' | 'end' | null;
  // The graph state's `files`, for state-backed routes.
  stateFiles: Readonly<StateFiles>;
  // For python_run_prepared and file_write: the content the tool node extracted for
  // this call from a fenced block of the model's message, or the sentence saying why
  // none could be assigned.
  extracted?: { content: string } | { error: string };
}

export function toolCallContext(config: RunnableConfig | undefined): ToolCallContext {
  const call = config?.configurable?.[CONFIG_TOOL_CALL] as ToolCallContext | undefined;
  if (!call || typeof call.tenantId !== 'string' || typeof call.threadId !== 'string') {
    // A programming error, not a model error: tools only run inside Drydock's tool node.
    throw new DrydockError(
      'TOOL_CONTEXT_MISSING',
      'This tool was called outside a Drydock agent run: its RunnableConfig names no tenant and thread.',
      500,
    );
  }
  return call;
}
