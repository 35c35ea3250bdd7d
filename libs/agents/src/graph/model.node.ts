import { AIMessage, SystemMessage, type BaseMessage } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import { Command, END } from '@langchain/langgraph';
import { randomUUID } from 'node:crypto';
import { assignBlocksToCalls, isExtractionTool, messageText } from '../extraction/index.js';
import type { AgentState, AgentStateUpdate, ExtractedUpdate } from './agent-state.js';
import type { AgentResolver, ResolvedAgent } from './resolved-agent.js';
import { runScopeOf } from './run-scope.js';

// Calls the agent's model with its instructions and the conversation, and goes to the
// tool node when the reply calls tools, else ends the run. When the reply calls
// python_run_prepared or file_write, the fenced blocks of the same reply are assigned to
// those calls here and kept in state until the tool node uses them.
export function createModelNode(resolver: AgentResolver, toolsNode: string) {
  return async function modelNode(state: AgentState, config: RunnableConfig): Promise<Command> {
    const agent = await resolver.resolve(runScopeOf(config));
    const prompt: BaseMessage[] = agent.instructions ? [instructionsOf(agent), ...state.messages] : state.messages;
    const reply = (await agent.model.invoke(prompt, config)) as AIMessage;
    const calls = reply.tool_calls ?? [];
    // Every call needs an id: tool messages answer calls by id.
    for (const call of calls) call.id ??= `call_${randomUUID().replace(/-/g, '')}`;
    const extracted: ExtractedUpdate = {};
    if (calls.some((call) => isExtractionTool(call.name))) {
      for (const [id, assignment] of assignBlocksToCalls(messageText(reply.content), calls)) {
        extracted[id] = assignment.ok ? { content: assignment.content } : { error: assignment.error };
      }
    }
    const update: AgentStateUpdate = { messages: [reply], extracted };
    // To the tools while the model calls any, else the run ends with its answer.
    return new Command({ update, goto: calls.length ? toolsNode : END });
  };
}

// One system message per resolved agent (they are cached per definition version), so
// the model client's per-message caches hold the instructions too.
const systemMessages = new WeakMap<ResolvedAgent, SystemMessage>();

function instructionsOf(agent: ResolvedAgent): SystemMessage {
  let message = systemMessages.get(agent);
  if (!message) {
    message = new SystemMessage(agent.instructions);
    systemMessages.set(agent, message);
  }
  return message;
}
