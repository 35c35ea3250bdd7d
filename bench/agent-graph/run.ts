// bench/agent-graph: the CPU of the agent's graph alone, per turn, with no I/O. One turn
// is what bench/agent's is (a user message, the model calls execute_python, the tool
// runs, the model answers), here with the scripted model in process, a sandbox that
// answers at once and a checkpointer that keeps the checkpoint objects in memory
// without serializing them (as CachedPostgresSaver's cache does on the hot path). What
// is left is LangGraph's step loop, LangChain's runnables and Drydock's two nodes.
//
// The baseline, in the same process: the same model and the same tool invoked in the
// same order by hand (model, tool, model), without the graph. Both run in alternating
// rounds; reported per turn: CPU (process.cpuUsage(), every thread) and wall time.
//
//   npm run build && npm run bench:agent-graph -- [--turns 3000] [--turns-per-thread 20] [--rounds 2]
import { AIMessage, HumanMessage, type BaseMessage, type ToolCall } from '@langchain/core/messages';
import type { RunnableConfig } from '@langchain/core/runnables';
import {
  BaseCheckpointSaver,
  copyCheckpoint,
  type Checkpoint,
  type CheckpointMetadata,
  type CheckpointTuple,
} from '@langchain/langgraph-checkpoint';
import {
  buildAgentGraph,
  CONFIG_AGENT_ID,
  CONFIG_TENANT_ID,
  CONFIG_THREAD_ID,
  CONFIG_TOOL_CALL,
  createExecutePythonTool,
  ScriptedChatModel,
  ToolResultEvictor,
  type Backend,
  type ExecuteResult,
  type ResolvedAgent,
  type SandboxBackend,
  type ToolCallContext,
} from '@drydock/agents';
import { BenchError, fixed, readArgs, runMain, table, wholeNumber } from '../lib/harness.js';

const USAGE = `Usage: node dist/bench/agent-graph/run.js [--turns N] [--turns-per-thread N] [--rounds N] [--warmup N]

  --turns <n>             timed turns per run          (default 3000)
  --turns-per-thread <n>  a new thread every n turns   (default 20)
  --rounds <n>            ABBA rounds: graph, by hand, by hand, graph (default 2)
  --warmup <n>            untimed turns before each run (default 500)`;

// Keeps each thread's latest checkpoint as objects: what a load from CachedPostgresSaver's
// cache costs, without PostgreSQL and without serializing.
class ObjectSaver extends BaseCheckpointSaver {
  private readonly latest = new Map<string, CheckpointTuple>();

  async getTuple(config: RunnableConfig): Promise<CheckpointTuple | undefined> {
    const tuple = this.latest.get(String(config.configurable?.thread_id));
    if (!tuple) return undefined;
    return { ...tuple, config: { configurable: { ...tuple.config.configurable } }, checkpoint: copyCheckpoint(tuple.checkpoint) };
  }

  async *list(): AsyncGenerator<CheckpointTuple> {}

  async put(config: RunnableConfig, checkpoint: Checkpoint, metadata: CheckpointMetadata): Promise<RunnableConfig> {
    const threadId = String(config.configurable?.thread_id);
    const next = { configurable: { thread_id: threadId, checkpoint_ns: '', checkpoint_id: checkpoint.id } };
    this.latest.set(threadId, { config: next, checkpoint: copyCheckpoint(checkpoint), metadata, pendingWrites: [] });
    return next;
  }

  async putWrites(): Promise<void> {}

  async deleteThread(threadId: string): Promise<void> {
    this.latest.delete(threadId);
  }
}

const PRINTED: ExecuteResult = {
  status: 'ok',
  stdout: '1\n',
  stderr: '',
  truncated: false,
  result: null,
  error: null,
  stateLost: false,
  executionId: 'exe_bench',
  files: { changed: [], deleted: [] },
  artifacts: [],
};

async function main(): Promise<void> {
  const values = readArgs(
    { turns: { type: 'string' }, 'turns-per-thread': { type: 'string' }, rounds: { type: 'string' }, warmup: { type: 'string' } },
    USAGE,
  );
  const turns = wholeNumber('--turns', values.turns, 3000, 1);
  const perThread = wholeNumber('--turns-per-thread', values['turns-per-thread'], 20, 1);
  const rounds = wholeNumber('--rounds', values.rounds, 2, 1);
  const warmup = wholeNumber('--warmup', values.warmup, 500, 0);

  let calls = 0;
  const model = new ScriptedChatModel((turn) =>
    turn.step === 0
      ? new AIMessage({ content: '', tool_calls: [{ id: `call_${++calls}`, name: 'execute_python', args: { code: 'print(1)' } }] })
      : new AIMessage('done'),
  );
  // The scripted model remembers every call for tests; a bench of thousands of turns must not.
  model.calls.length = 0;
  const executePython = createExecutePythonTool({});
  const sandbox = { execute: async () => PRINTED } as unknown as SandboxBackend;
  const backend = {} as Backend;
  const agent: ResolvedAgent = {
    instructions: 'Answer briefly.',
    model: model.bindTools([executePython]),
    tools: new Map([['execute_python', executePython]]),
    backend,
    sandbox,
    network: null,
    template: null,
  };
  const graph = buildAgentGraph({
    resolver: { resolve: async () => agent },
    evictor: new ToolResultEvictor({ thresholdChars: 80_000 }),
    checkpointer: new ObjectSaver(),
  });

  let thread = 0;
  const configOf = (threadId: string) => ({
    configurable: { thread_id: `ten_bench:${threadId}`, [CONFIG_TENANT_ID]: 'ten_bench', [CONFIG_THREAD_ID]: threadId, [CONFIG_AGENT_ID]: 'agent' },
    durability: 'exit' as const,
  });

  const viaGraph = async (): Promise<void> => {
    const stream = await graph.stream({ messages: [new HumanMessage('run it')] }, { ...configOf(`t${thread}`), streamMode: ['values'] });
    let last: unknown;
    for await (const chunk of stream) last = chunk;
    const messages = (last as [string, { messages: BaseMessage[] }])[1].messages;
    if (messages.at(-1)?.content !== 'done') throw new BenchError('the graph did not end with the model\'s answer');
  };

  // The same runnables in the same order, without LangGraph: the conversation kept in a
  // plain array per thread.
  const conversations = new Map<number, BaseMessage[]>();
  const byHand = async (): Promise<void> => {
    const messages = conversations.get(thread) ?? [];
    conversations.set(thread, messages);
    messages.push(new HumanMessage('run it'));
    const reply = (await agent.model.invoke(messages)) as AIMessage;
    messages.push(reply);
    for (const call of reply.tool_calls ?? []) {
      const ctx: ToolCallContext = { tenantId: 'ten_bench', threadId: `t${thread}`, toolCallId: call.id!, backend, sandbox, stateFiles: {} };
      const result = await executePython.invoke({ ...(call as ToolCall), type: 'tool_call' }, { configurable: { [CONFIG_TOOL_CALL]: ctx } });
      messages.push(result as BaseMessage);
    }
    const answer = (await agent.model.invoke(messages)) as AIMessage;
    messages.push(answer);
    if (answer.content !== 'done') throw new BenchError('the loop by hand did not end with the model\'s answer');
  };

  const run = async (turn: () => Promise<void>, n: number) => {
    for (let i = 0; i < n; i++) {
      if (i % perThread === 0) {
        conversations.delete(thread);
        thread++;
      }
      await turn();
      model.calls.length = 0;
    }
  };
  const timed = async (turn: () => Promise<void>) => {
    await run(turn, warmup);
    const cpu0 = process.cpuUsage();
    const t0 = performance.now();
    await run(turn, turns);
    const cpu = process.cpuUsage(cpu0);
    return { cpuMs: (cpu.user + cpu.system) / 1000 / turns, wallMs: (performance.now() - t0) / turns };
  };

  console.log(`bench/agent-graph: ${turns} turns per run (${warmup} untimed first), a new thread every ${perThread}, ${rounds} ABBA round(s)`);
  const results = { graph: [] as Array<{ cpuMs: number; wallMs: number }>, hand: [] as Array<{ cpuMs: number; wallMs: number }> };
  for (let r = 0; r < rounds; r++) {
    for (const which of ['graph', 'hand', 'hand', 'graph'] as const) results[which].push(await timed(which === 'graph' ? viaGraph : byHand));
  }
  const rows = (['graph', 'hand'] as const).map((which) => {
    const label = which === 'graph' ? 'agent graph (LangGraph)' : 'same runnables by hand';
    return [label, results[which].map((x) => fixed(x.cpuMs, 3)).join(' '), results[which].map((x) => fixed(x.wallMs, 3)).join(' ')];
  });
  console.log(table(['per turn (ms)', 'CPU, each run', 'wall, each run'], rows));
  const mean = (xs: number[]) => xs.reduce((a, b) => a + b, 0) / xs.length;
  const graphCpu = mean(results.graph.map((x) => x.cpuMs));
  const handCpu = mean(results.hand.map((x) => x.cpuMs));
  console.log(`\nmean CPU per turn: graph ${fixed(graphCpu, 3)} ms, by hand ${fixed(handCpu, 3)} ms; the graph's loop adds ${fixed(graphCpu - handCpu, 3)} ms (${fixed(graphCpu / handCpu, 2)}x)`);
}

runMain('bench/agent-graph', main);
