import { AIMessage, ToolMessage, type ToolCall } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { Command } from '@langchain/langgraph';
import { DrydockError } from '@drydock/core';
import type { StateFilesUpdate } from '../backends/backend-protocol.js';
import { mergeStateFiles } from '../backends/state-backend.js';
import { BackendEvictionStore } from '../eviction/backend-eviction-store.js';
import type { ToolResultEvictor } from '../eviction/tool-result-eviction.js';
import { messageText } from '../extraction/index.js';
import { CONFIG_TOOL_CALL, type ToolCallContext } from '../tools/tool-context.js';
import type { AgentState, ExtractedUpdate } from './agent-state.js';
import type { AgentResolver } from './resolved-agent.js';
import { runScopeOf } from './run-scope.js';

interface ToolArtifactLike {
  isError?: boolean;
  filesUpdate?: StateFilesUpdate;
}

// Runs the last AI message's tool calls in order (two Python calls share one session,
// and a file_write is often followed by code that reads the file), each with its own
// context in the RunnableConfig. Results over the threshold are evicted to the thread's
// files. Returns one Command: the tool messages, state-file changes, and the extracted
// contents cleared.
export function createToolNode(resolver: AgentResolver, evictor: ToolResultEvictor) {
  return async function toolNode(state: AgentState, config: RunnableConfig): Promise<Command> {
    const last = state.messages.at(-1);
    const calls: ToolCall[] = last && AIMessage.isInstance(last) ? (last.tool_calls ?? []) : [];
    const scope = runScopeOf(config);
    const agent = await resolver.resolve(scope);

    let stateFiles = state.files;
    let filesUpdate: StateFilesUpdate = {};
    const absorb = (update: StateFilesUpdate | undefined) => {
      if (!update || Object.keys(update).length === 0) return;
      filesUpdate = { ...filesUpdate, ...update };
      stateFiles = mergeStateFiles(stateFiles, update);
    };

    const messages: ToolMessage[] = [];
    for (const call of calls) {
      const id = call.id!;
      const tool = agent.tools.get(call.name);
      let message: ToolMessage;
      if (!tool) {
        const names = [...agent.tools.keys()].join(', ');
        message = new ToolMessage({
          content: `Error: there is no tool named "${call.name}". The tools are: ${names}.`,
          tool_call_id: id,
          name: call.name,
          status: 'error',
        });
      } else {
        const ctx: ToolCallContext = {
          tenantId: scope.tenantId,
          threadId: scope.threadId,
          toolCallId: id,
          backend: agent.backend,
          sandbox: agent.sandbox,
          template: agent.template,
          network: agent.network,
          tier: agent.tier,
          idleAction: agent.idleAction,
          stateFiles,
          extracted: state.extracted[id],
        };
        message = await invokeTool(tool, call, { ...config, configurable: { ...config.configurable, [CONFIG_TOOL_CALL]: ctx } });
        const artifact = message.artifact as ToolArtifactLike | undefined;
        absorb(artifact?.filesUpdate);
        if (artifact?.isError) message.status = 'error';
      }

      const content = typeof message.content === 'string' ? message.content : messageText(message.content);
      const store = new BackendEvictionStore(agent.backend, { tenantId: scope.tenantId, threadId: scope.threadId, stateFiles });
      const outcome = await evictor.process({ toolName: call.name, toolCallId: id, content }, store);
      absorb(store.filesUpdate);
      if (outcome.content !== content) {
        message = new ToolMessage({
          content: outcome.content,
          tool_call_id: id,
          name: message.name,
          status: message.status,
          artifact: message.artifact,
        });
      }
      messages.push(message);
    }

    const cleared: ExtractedUpdate = Object.fromEntries(Object.keys(state.extracted).map((id) => [id, null]));
    return new Command({ update: { messages, files: filesUpdate, extracted: cleared } });
  };
}

async function invokeTool(
  tool: { invoke(input: unknown, config?: RunnableConfig): Promise<unknown> },
  call: ToolCall,
  config: RunnableConfig,
): Promise<ToolMessage> {
  try {
    const output = await tool.invoke({ ...call, type: 'tool_call' }, config);
    if (ToolMessage.isInstance(output)) return output;
    return new ToolMessage({
      content: typeof output === 'string' ? output : JSON.stringify(output),
      tool_call_id: call.id!,
      name: call.name,
    });
  } catch (error) {
    const text = recoverableErrorText(call.name, error);
    if (text === null) throw error;
    return new ToolMessage({ content: text, tool_call_id: call.id!, name: call.name, status: 'error' });
  }
}

// What the model can act on comes back as text: arguments that do not fit the tool's
// schema, and any refusal with a 4xx code (a quota, a busy session). Platform failures
// (5xx, database down) fail the run instead of being hidden from the caller.
function recoverableErrorText(toolName: string, error: unknown): string | null {
  const name = (error as Error)?.name ?? '';
  if (name === 'ToolInputParsingException' || name === 'ZodError') {
    return `Error: the arguments do not fit the ${toolName} tool's schema: ${(error as Error).message}`;
  }
  if (error instanceof DrydockError && error.status < 500) {
    return `Error (${error.code}): ${error.message}`;
  }
  return null;
}
