import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import {
  AGENT_RUNTIME,
  ScriptedModelProvider,
  type AgentRuntime,
  type ChatScript,
  type ScriptedTurn,
} from '@drydock/agents';
import { startPlatform, type Platform } from './support/platform.js';
import type { ApiClient } from './support/api-client.js';

// The agent end to end: a scripted model (never a live one) drives the real graph, tools,
// PostgreSQL checkpointer, VFS, sessions, containers and artifact store.
describe('Agent', () => {
  let platform: Platform;
  let runtime: AgentRuntime;
  let api: ApiClient & { tenantId: string };
  // Each test sets the script the model follows.
  let script: ChatScript = () => new AIMessage('no script');

  beforeAll(async () => {
    platform = await startPlatform({}, { chatModels: new ScriptedModelProvider(() => (turn) => script(turn)) });
    runtime = platform.gateway.get<AgentRuntime>(AGENT_RUNTIME);
    api = await platform.newTenant();
  });

  afterAll(async () => {
    await platform?.close();
  });

  const run = async (tenantId: string, threadId: string, text: string, assistantId = 'agent') => {
    const config = await runtime.runConfig(tenantId, threadId, assistantId);
    const state = (await runtime.graph.invoke({ messages: [new HumanMessage(text)] }, config)) as {
      messages: BaseMessage[];
      extracted: Record<string, unknown>;
    };
    return state;
  };
  const toolMessages = (messages: BaseMessage[]) => messages.filter((m) => ToolMessage.isInstance(m)) as ToolMessage[];
  const lastToolText = (turn: ScriptedTurn) => String(turn.messages.at(-1)!.content);
  const steps =
    (...replies: Array<AIMessage | ((turn: ScriptedTurn) => AIMessage)>): ChatScript =>
    (turn) => {
      const reply = replies[turn.step];
      if (!reply) throw new Error(`no scripted reply for step ${turn.step}`);
      return typeof reply === 'function' ? reply(turn) : reply;
    };
  const call = (id: string, name: string, args: Record<string, unknown>) => ({ id, name, args, type: 'tool_call' as const });

  it('should write a CSV, analyse it with pandas, plot it as an artifact and answer', async () => {
    const threadId = 'agent-conversation';
    script = steps(
      new AIMessage({
        content: 'Here is the data:\n```csv\ncity,temp\nOslo,3\nLima,19\nCairo,25\n```',
        tool_calls: [call('c1', 'file_write', { file_path: '/data/temps.csv', description: 'temperatures' })],
      }),
      new AIMessage({
        content: [
          'Now the analysis:',
          '```python',
          'import pandas as pd',
          'import matplotlib',
          "matplotlib.use('Agg')",
          'import matplotlib.pyplot as plt',
          "df = pd.read_csv('/session/data/temps.csv')",
          "mean = df['temp'].mean()",
          "print(f'mean={mean:.2f}')",
          "df.plot.bar(x='city', y='temp')",
          "plt.savefig('/session/artifacts/temps.png')",
          "plt.close('all')",
          '```',
        ].join('\n'),
        tool_calls: [call('c2', 'python_run_prepared', { file_path: '/analysis.py', description: 'mean and plot' })],
      }),
      (turn) => new AIMessage(`The mean temperature is ${/mean=([\d.]+)/.exec(lastToolText(turn))?.[1] ?? 'unknown'}.`),
    );

    const state = await run(api.tenantId, threadId, 'Analyse these temperatures');

    const answer = state.messages.at(-1)!;
    expect(answer.content).toBe('The mean temperature is 15.67.');
    const [written, analysed] = toolMessages(state.messages);
    expect(written!.status).not.toBe('error');
    expect(analysed!.content).toContain('mean=15.67');
    expect(state.extracted).toEqual({});

    const files = await api.get(`/v1/threads/${threadId}/files/read?path=/data/temps.csv`);
    expect(files.body.content).toContain('Cairo,25');
    const script_ = await api.get(`/v1/threads/${threadId}/files/read?path=/analysis.py`);
    expect(script_.body.content).toContain("df = pd.read_csv('/session/data/temps.csv')");
    const artifacts = await api.get(`/v1/artifacts?threadId=${threadId}`);
    expect(artifacts.body.artifacts).toEqual([expect.objectContaining({ name: 'temps.png', mime: 'image/png' })]);
  });

  it('should keep two concurrent conversations apart through the same tools', async () => {
    script = steps(
      (turn) => {
        const who = String(turn.messages.at(-1)!.content);
        return new AIMessage({
          content: `\`\`\`text\n${who}\n\`\`\``,
          tool_calls: [
            call('w1', 'file_write', { file_path: '/who.txt', description: 'who' }),
            call('p1', 'execute_python', { code: `secret = ${JSON.stringify(who)}` }),
          ],
        });
      },
      new AIMessage({
        content: '',
        tool_calls: [
          call('r1', 'read_file', { file_path: '/who.txt' }),
          call('p2', 'execute_python', { code: 'print(secret)' }),
          call('g1', 'glob', { pattern: '**/*.txt' }),
        ],
      }),
      new AIMessage('done'),
    );

    const [a, b] = await Promise.all([
      run(api.tenantId, 'agent-thread-a', 'alice'),
      run(api.tenantId, 'agent-thread-b', 'bob'),
    ]);

    const texts = (state: { messages: BaseMessage[] }) => toolMessages(state.messages).map((m) => String(m.content));
    const [, , readA, printA, globA] = texts(a);
    const [, , readB, printB, globB] = texts(b);
    expect(readA).toContain('alice');
    expect(readA).not.toContain('bob');
    expect(printA).toContain('alice');
    expect(readB).toContain('bob');
    expect(printB).toContain('bob');
    expect(printB).not.toContain('alice');
    expect(globA).toContain('/who.txt');
    expect(globB).toContain('/who.txt');
    const sessions = await api.get('/v1/sessions');
    const threads = (sessions.body.sessions as Array<{ threadId: string }>).map((s) => s.threadId);
    expect(threads).toEqual(expect.arrayContaining(['agent-thread-a', 'agent-thread-b']));
  });

  it('should extract two blocks for two calls in one message, a c++ fence, and report a call with no block', async () => {
    const threadId = 'agent-extraction';
    script = steps(
      new AIMessage({
        content: [
          'The header and a script:',
          '~~~c++ file=/src/main.cpp',
          'int main() { auto s = "```"; return 0; }',
          '~~~',
          '```python',
          "print(open('/session/src/main.cpp').read().count('`'))",
          '```',
        ].join('\n'),
        tool_calls: [
          call('x1', 'file_write', { file_path: '/src/main.cpp', description: 'program' }),
          call('x2', 'python_run_prepared', { file_path: '/count.py', description: 'count backticks' }),
        ],
      }),
      new AIMessage({ content: 'No code this time.', tool_calls: [call('x3', 'file_write', { file_path: '/empty.txt', description: 'nothing' })] }),
      new AIMessage('done'),
    );

    const state = await run(api.tenantId, threadId, 'go');

    const [cpp, count, missing] = toolMessages(state.messages);
    expect(cpp!.status).not.toBe('error');
    expect(count!.content).toContain('3');
    expect(missing!.status).toBe('error');
    expect(missing!.content).toMatch(/fenced/i);
    const source = await api.get(`/v1/threads/${threadId}/files/read?path=/src/main.cpp`);
    expect(source.body.content).toContain('auto s = "```"');
    expect((await api.get(`/v1/threads/${threadId}/files/stat?path=/empty.txt`)).status).toBe(404);
    expect(state.extracted).toEqual({});
  });

  it('should evict a 200 KB result to the thread files and page through it with read_file', async () => {
    const threadId = 'agent-eviction';
    script = steps(
      new AIMessage({
        content: '',
        tool_calls: [call('call:big/1', 'execute_python', { code: "for i in range(4000): print(f'row {i:05d} ' + 'x' * 40)" })],
      }),
      (turn) => {
        const pointer = /\/large_tool_results\/[A-Za-z0-9._-]*[A-Za-z0-9_-]/.exec(lastToolText(turn))![0];
        return new AIMessage({ content: '', tool_calls: [call('r1', 'read_file', { file_path: pointer, offset: 2000, limit: 3 })] });
      },
      new AIMessage('done'),
    );

    const state = await run(api.tenantId, threadId, 'print a lot');

    const [big, page] = toolMessages(state.messages);
    const preview = String(big!.content);
    expect(preview.length).toBeLessThan(20_000);
    expect(preview).toContain('row 00000');
    expect(preview).toContain('row 03999');
    expect(preview).toContain('/large_tool_results/call_big_1');
    expect(String(page!.content)).toContain('row 01999');
    expect(String(page!.content)).toContain('row 02000');
    const saved = await api.get(`/v1/threads/${threadId}/files/stat?path=/large_tool_results/call_big_1`);
    expect(saved.status).toBe(200);
    expect(saved.body.size).toBeGreaterThan(190_000);
  });

  it('should run shell commands with execute on the thread\'s files, answering output and exit code, a large answer evicted', async () => {
    const threadId = 'agent-shell';
    script = steps(
      new AIMessage({
        content: '```text\nalpha\nbeta\n```',
        tool_calls: [call('f1', 'file_write', { file_path: '/words.txt', description: 'words' }), call('p1', 'execute_python', { code: 'kept = 41' })],
      }),
      new AIMessage({ content: '', tool_calls: [call('e1', 'execute', { command: 'sort -r words.txt | tr a-z A-Z; echo warn >&2' })] }),
      new AIMessage({ content: '', tool_calls: [call('e2', 'execute', { command: 'seq 1 40000; exit 4' }), call('p2', 'execute_python', { code: 'kept + 1' })] }),
      (turn) => new AIMessage(`exit 4 seen: ${turn.messages.some((m) => ToolMessage.isInstance(m) && String(m.content).includes('Exit code: 4'))}`),
    );

    const state = await run(api.tenantId, threadId, 'sort the words, then count a lot');

    const [, , sorted, big, python] = toolMessages(state.messages);
    expect(sorted!.content).toBe('BETA\nALPHA\nwarn\n\nExit code: 0');
    expect(sorted!.status).not.toBe('error');
    expect(big!.status).toBe('error');
    const preview = String(big!.content);
    expect(preview.length).toBeLessThan(20_000);
    expect(preview).toContain('/large_tool_results/e2');
    expect(preview).toContain('40000\n');
    expect(preview).toMatch(/^ +40002\tExit code: 4$/m);
    // The commands ran beside the Python session, whose variables are still there.
    expect(python!.content).toContain('42');
    expect(state.messages.at(-1)!.content).toBe('exit 4 seen: true');
    const saved = await api.get(`/v1/threads/${threadId}/files/stat?path=/large_tool_results/e2`);
    expect(saved.status).toBe(200);
    expect(saved.body.size).toBeGreaterThan(228_000);
  });

  it('should route /memories/ to the tenant-wide store: another thread of the tenant reads it, another tenant does not', async () => {
    const routes = [{ prefix: '/memories/', backend: 'tenant-store' }];
    const mine = await api.post('/v1/agents', { name: 'with-memory', backendRoutes: routes });
    expect(mine.status).toBe(201);
    const stranger = await platform.newTenant();
    const theirs = await stranger.post('/v1/agents', { name: 'with-memory', backendRoutes: routes });
    expect(theirs.status).toBe(201);

    script = steps(
      new AIMessage({ content: '', tool_calls: [call('m1', 'write_file', { file_path: '/memories/notes.md', content: 'likes tea' })] }),
      new AIMessage('noted'),
    );
    await run(api.tenantId, 'memory-writer', 'remember', mine.body.id);

    script = steps(
      new AIMessage({ content: '', tool_calls: [call('m2', 'read_file', { file_path: '/memories/notes.md' })] }),
      new AIMessage('done'),
    );
    const sameTenant = await run(api.tenantId, 'memory-reader', 'recall', mine.body.id);
    expect(String(toolMessages(sameTenant.messages)[0]!.content)).toContain('likes tea');
    const otherTenant = await run(stranger.tenantId, 'memory-reader', 'recall', theirs.body.id);
    const denied = toolMessages(otherTenant.messages)[0]!;
    expect(denied.status).toBe('error');
    expect(String(denied.content)).not.toContain('likes tea');
    // Not a file of the writer's thread: it lives in the tenant's store.
    expect((await api.get('/v1/threads/memory-writer/files/stat?path=/memories/notes.md')).status).toBe(404);
  });

  it('should run a user-defined tool whose public function calls a private helper, also after export and import', async () => {
    const source = [
      'import statistics',
      '',
      'def _spread(values):',
      '    return max(values) - min(values)',
      '',
      'def summarize(values: list[float]) -> dict:',
      '    """Summarize a list of numbers.',
      '',
      '    Args:',
      '        values: The numbers to summarize.',
      '    """',
      '    return {"mean": statistics.mean(values), "spread": _spread(values)}',
      '',
    ].join('\n');
    const created = await api.post('/v1/agents', { name: 'stats', tools: ['read_file'], pythonModules: [{ name: 'stats_tools', source }] });
    expect(created.status).toBe(201);
    script = steps(
      (turn) => {
        expect(turn.toolNames).toEqual(['read_file', 'summarize']);
        return new AIMessage({ content: '', tool_calls: [call('s1', 'summarize', { values: [1, 2, 3, 10] })] });
      },
      new AIMessage('done'),
    );
    const original = await run(api.tenantId, 'stats-thread', 'summarize', created.body.id);
    const result = toolMessages(original.messages)[0]!;
    expect(result.status).not.toBe('error');
    expect(JSON.parse(String(result.content))).toEqual({ mean: 4, spread: 9 });

    const bundle = (await api.get(`/v1/agents/${created.body.id}/export`)).body;
    const elsewhere = await platform.newTenant();
    const imported = await elsewhere.post('/v1/agents/import', bundle);
    expect(imported.status).toBe(201);
    const again = await run(elsewhere.tenantId, 'stats-thread', 'summarize', imported.body.id);
    expect(JSON.parse(String(toolMessages(again.messages)[0]!.content))).toEqual({ mean: 4, spread: 9 });

    const tampered = structuredClone(bundle);
    tampered.agent.pythonModules[0].source = tampered.agent.pythonModules[0].source.replace('max(values)', 'max(values)+1');
    const refused = await elsewhere.post('/v1/agents/import', tampered);
    expect(refused.status).toBe(422);
    expect(refused.body.error.code).toBe('BUNDLE_MODULE_HASH_MISMATCH');
  });
});
