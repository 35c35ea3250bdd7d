import type { BackendContext } from '../backends/backend-protocol.js';
import type { ToolCallContext } from './tool-context.js';

// The part of a call's context a backend reads: whose files, the graph state's `files`
// for state-backed routes, and what the thread's session starts with.
export function backendContextOf(ctx: ToolCallContext): BackendContext {
  return {
    tenantId: ctx.tenantId,
    threadId: ctx.threadId,
    stateFiles: ctx.stateFiles,
    ...(ctx.template ? { template: ctx.template } : {}),
    ...(ctx.network ? { network: ctx.network } : {}),
    ...(ctx.tier ? { tier: ctx.tier } : {}),
    ...(ctx.idleAction ? { idleAction: ctx.idleAction } : {}),
  };
}

