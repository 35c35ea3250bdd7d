import type { RunnableConfig } from '@langchain/core/runnables';
import { FakeListChatModel } from '@langchain/core/utils/testing';
import { END, MemorySaver, MessagesAnnotation, START, StateGraph } from '@langchain/langgraph';
import { NotFoundError } from '@drydock/core';
import { DEFAULT_ASSISTANT_ID, type AgentGraph, type AgentRuntime, type AssistantInfo } from '@drydock/agents';

const ASSISTANT: AssistantInfo = {
  assistantId: DEFAULT_ASSISTANT_ID,
  graphId: 'agent',
  name: 'Echo agent',
  description: 'Answers "echo: <your last message>" (tests of the LangGraph API).',
  createdAt: '2025-01-01T00:00:00.000Z',
  updatedAt: '2025-01-01T00:00:00.000Z',
  metadata: { kind: 'echo' },
};

// An AgentRuntime for tests of the LangGraph-compatible API: a real StateGraph over
// MessagesAnnotation with one node whose scripted chat model streams "echo: <text>"
// token by token, checkpointed in memory under a tenant-qualified thread key as the
// real runtime does.
//   "hang"  → the node waits until the run is aborted (counts `aborted`)
//   "hold"  → the node waits until release() is called
//   "fail"  → the node throws
export class EchoAgentRuntime implements AgentRuntime {
  readonly graph: AgentGraph;
  readonly checkpointer = new MemorySaver();
  aborted = 0;
  // Called when a "hang"/"hold" node has started.
  private waiting: Array<() => void> = [];
  private holds: Array<() => void> = [];

  constructor() {
    const compiled = new StateGraph(MessagesAnnotation)
      .addNode('agent', async (state, config) => {
        const last = state.messages.at(-1);
        const text = typeof last?.content === 'string' ? last.content : JSON.stringify(last?.content ?? '');
        if (text === 'fail') throw new Error('scripted failure');
        if (text === 'hang' || text === 'hold') {
          this.waiting.splice(0).forEach((notify) => notify());
          await new Promise<void>((resolve, reject) => {
            if (text === 'hold') this.holds.push(resolve);
            config.signal?.addEventListener('abort', () => {
              this.aborted += 1;
              reject(new Error('aborted'));
            });
          });
        }
        const model = new FakeListChatModel({ responses: [`echo: ${text}`] });
        return { messages: [await model.invoke(state.messages, config)] };
      })
      .addEdge(START, 'agent')
      .addEdge('agent', END)
      .compile({ checkpointer: this.checkpointer });
    this.graph = compiled as unknown as AgentGraph;
  }

  // Resolves when a "hang" or "hold" node is running.
  nodeWaiting(): Promise<void> {
    return new Promise((resolve) => this.waiting.push(resolve));
  }

  release(): void {
    this.holds.splice(0).forEach((resolve) => resolve());
  }

  async runConfig(tenantId: string, threadId: string, assistantId: string): Promise<RunnableConfig> {
    await this.getAssistant(tenantId, assistantId);
    return {
      configurable: { thread_id: this.key(tenantId, threadId), drydock_tenant_id: tenantId, drydock_thread_id: threadId },
    };
  }

  stateConfig(tenantId: string, threadId: string, checkpointId?: string): RunnableConfig {
    return {
      configurable: {
        thread_id: this.key(tenantId, threadId),
        checkpoint_ns: '',
        ...(checkpointId ? { checkpoint_id: checkpointId } : {}),
      },
    };
  }

  publicThreadId(checkpointThreadId: string): string {
    return checkpointThreadId.slice(checkpointThreadId.indexOf(':') + 1);
  }

  async deleteThread(tenantId: string, threadId: string): Promise<void> {
    await this.checkpointer.deleteThread(this.key(tenantId, threadId));
  }

  // Its MemorySaver is its whole store, and no cache is kept in front of it.
  forgetTenant(): number {
    return 0;
  }

  async listAssistants(): Promise<AssistantInfo[]> {
    return [ASSISTANT];
  }

  async getAssistant(_tenantId: string, assistantId: string): Promise<AssistantInfo> {
    if (assistantId !== DEFAULT_ASSISTANT_ID) throw new NotFoundError('AGENT_NOT_FOUND', `No agent with id ${assistantId}.`);
    return ASSISTANT;
  }

  private key(tenantId: string, threadId: string): string {
    return `${tenantId}:${threadId}`;
  }
}
