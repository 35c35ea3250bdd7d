import type { BaseCheckpointSaver } from '@langchain/langgraph';
import { END, START, StateGraph } from '@langchain/langgraph';
import type { ToolResultEvictor } from '../eviction/tool-result-eviction.js';
import { AgentStateAnnotation } from './agent-state.js';
import { createModelNode } from './model.node.js';
import type { AgentResolver } from './resolved-agent.js';
import { useLeanRunnableContext } from './runnable-context.js';
import { createToolNode } from './tool.node.js';

export const MODEL_NODE = 'model';
export const TOOLS_NODE = 'tools';

// model -> tools -> model ... until the model answers without tool calls. Built once at
// start-up: everything per tenant, thread or agent comes from the run's config.
export function buildAgentGraph(deps: {
  resolver: AgentResolver;
  evictor: ToolResultEvictor;
  checkpointer: BaseCheckpointSaver;
}) {
  // No LangSmith RunTree per runnable when nothing traces (runnable-context.ts).
  useLeanRunnableContext();
  return new StateGraph(AgentStateAnnotation)
    // The model node says where to go next (a Command): a conditional edge would read
    // the whole state again after every model call to find its last message.
    .addNode(MODEL_NODE, createModelNode(deps.resolver, TOOLS_NODE), { ends: [TOOLS_NODE, END] })
    .addNode(TOOLS_NODE, createToolNode(deps.resolver, deps.evictor))
    .addEdge(START, MODEL_NODE)
    .addEdge(TOOLS_NODE, MODEL_NODE)
    .compile({ checkpointer: deps.checkpointer, name: 'agent' });
}
