import { AIMessage, HumanMessage, ToolMessage } from '@langchain/core/messages';
import { tool, type StructuredToolInterface } from '@langchain/core/tools';
import { MemorySaver } from '@langchain/langgraph';
import { z } from 'zod';
import { StateBackend } from '../backends/state-backend.js';
import type { SandboxBackend } from '../backends/backend-protocol.js';
import { ToolResultEvictor } from '../eviction/tool-result-eviction.js';
import { ScriptedChatModel, scriptOf } from '../models/scripted-chat-model.js';
import { CONFIG_AGENT_ID, CONFIG_TENANT_ID, CONFIG_THREAD_ID, toolCallContext } from '../tools/tool-context.js';
import { buildAgentGraph } from './agent-graph.js';
import type { AgentResolver, ResolvedAgent } from './resolved-agent.js';

// Tools of this test only: they report what the tool node handed them.
const seen: Array<{ threadId: string; extracted: unknown }> = [];
const fileWrite = tool(
  async ({ file_path }, config) => {
    const ctx = toolCallContext(config);
    seen.push({ threadId: ctx.threadId, extracted: ctx.extracted });
    if (!ctx.extracted || 'error' in ctx.extracted) return [ctx.extracted?.error ?? 'no block', { isError: true }];
    const written = await ctx.backend.write(ctx, file_path, ctx.extracted.content);
    return [`wrote ${file_path}`, { filesUpdate: written.filesUpdate }];
  },
  { name: 'file_write', description: 'write', schema: z.object({ file_path: z.string(), description: z.string() }), responseFormat: 'content_and_artifact' },
);
const shout = tool(async ({ size }) => [`${'line of output\n'.repeat(size)}`, {}], {
  name: 'shout',
  description: 'prints a lot',
  schema: z.object({ size: z.number() }),
  responseFormat: 'content_and_artifact',
});

function graphWith(model: ScriptedChatModel, thresholdChars = 80_000) {
  const backend = new StateBackend();
  const agent: ResolvedAgent = {
    instructions: 'be brief',
    model: model.bindTools([fileWrite, shout]),
    tools: new Map<string, StructuredToolInterface>([
      ['file_write', fileWrite],
      ['shout', shout],
    ]),
    backend,
    sandbox: backend as unknown as SandboxBackend,
    template: null,
    network: null,
  };
  const resolver: AgentResolver = { resolve: async () => agent };
  return buildAgentGraph({ resolver, evictor: new ToolResultEvictor({ thresholdChars }), checkpointer: new MemorySaver() });
}

const configFor = (threadId: string) => ({
  configurable: { thread_id: `ten_a:${threadId}`, [CONFIG_TENANT_ID]: 'ten_a', [CONFIG_THREAD_ID]: threadId, [CONFIG_AGENT_ID]: 'agent' },
});

describe('buildAgentGraph', () => {
  beforeEach(() => (seen.length = 0));

  it('should give each extraction call its own block and clear the extracted content after use', async () => {
    const text = 'Two files:\n```csv file=/b.csv\nb,2\n```\n~~~c++\nint main() { return `1`; }\n~~~\n';
    const model = new ScriptedChatModel(
      scriptOf([
        new AIMessage({
          content: text,
          tool_calls: [
            { id: 'c1', name: 'file_write', args: { file_path: '/main.cpp', description: 'program' } },
            { id: 'c2', name: 'file_write', args: { file_path: '/b.csv', description: 'data' } },
          ],
        }),
        new AIMessage('done'),
      ]),
    );
    const sut = graphWith(model);
    const state = await sut.invoke({ messages: [new HumanMessage('write them')] }, configFor('t1'));

    expect(state.files['/main.cpp'].content).toEqual(['int main() { return `1`; }']);
    expect(state.files['/b.csv'].content).toEqual(['b,2']);
    expect(state.extracted).toEqual({});
    const tools = state.messages.filter((m: unknown) => ToolMessage.isInstance(m)) as ToolMessage[];
    expect(tools.map((m) => [m.tool_call_id, m.content])).toEqual([
      ['c1', 'wrote /main.cpp'],
      ['c2', 'wrote /b.csv'],
    ]);
    // The model saw its instructions first.
    expect(model.calls[0]!.messages[0]!.getType()).toBe('system');
  });

  it('should answer a call with no block with an error the model can act on', async () => {
    const model = new ScriptedChatModel(
      scriptOf([
        new AIMessage({ content: 'no code here', tool_calls: [{ id: 'c1', name: 'file_write', args: { file_path: '/x.py', description: 'x' } }] }),
        new AIMessage('sorry'),
      ]),
    );
    const state = await graphWith(model).invoke({ messages: [new HumanMessage('go')] }, configFor('t2'));
    const reply = state.messages.find((m: unknown) => ToolMessage.isInstance(m)) as ToolMessage;
    expect(reply.status).toBe('error');
    expect(String(reply.content)).toMatch(/fenced/i);
    expect(state.files).toEqual({});
  });

  it('should tell the model about an unknown tool instead of failing the run', async () => {
    const model = new ScriptedChatModel(
      scriptOf([new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'rm_rf', args: {} }] }), new AIMessage('ok')]),
    );
    const state = await graphWith(model).invoke({ messages: [new HumanMessage('go')] }, configFor('t3'));
    const reply = state.messages.find((m: unknown) => ToolMessage.isInstance(m)) as ToolMessage;
    expect(reply.content).toMatch(/no tool named "rm_rf".*file_write, shout/);
  });

  it('should evict a large result into the thread files and show a preview', async () => {
    const model = new ScriptedChatModel(
      scriptOf([new AIMessage({ content: '', tool_calls: [{ id: 'call/../1', name: 'shout', args: { size: 200 } }] }), new AIMessage('ok')]),
    );
    const state = await graphWith(model, 1000).invoke({ messages: [new HumanMessage('go')] }, configFor('t4'));
    const reply = state.messages.find((m: unknown) => ToolMessage.isInstance(m)) as ToolMessage;
    const saved = Object.keys(state.files).find((p) => p.startsWith('/large_tool_results/'))!;
    expect(saved).toBeDefined();
    // One path segment under the folder, whatever the id held.
    expect(saved.split('/')).toEqual(['', 'large_tool_results', 'call_.._1']);
    expect(String(reply.content)).toContain(saved);
    expect(String(reply.content).length).toBeLessThan(3000);
    expect((state.files[saved].content as string[]).length).toBe(201);
  });

  it('should keep two threads apart when they run at once through the same graph', async () => {
    const model = new ScriptedChatModel(
      scriptOf([
        (turn) =>
          new AIMessage({
            content: `\`\`\`\n${(turn.messages.at(-1)!.content as string)}\n\`\`\``,
            tool_calls: [{ id: 'c1', name: 'file_write', args: { file_path: '/who.txt', description: 'who' } }],
          }),
        new AIMessage('done'),
      ]),
    );
    const sut = graphWith(model);
    const [a, b] = await Promise.all([
      sut.invoke({ messages: [new HumanMessage('I am A')] }, configFor('ta')),
      sut.invoke({ messages: [new HumanMessage('I am B')] }, configFor('tb')),
    ]);
    expect(a.files['/who.txt'].content).toEqual(['I am A']);
    expect(b.files['/who.txt'].content).toEqual(['I am B']);
    expect(seen.map((s) => s.threadId).sort()).toEqual(['ta', 'tb']);
  });
});
