// Agent overhead benchmark (issue 5): one tool-calling turn end to end, with a scripted
// model (model node -> tool node -> execute_python in the thread's sandbox -> model node
// -> answer, checkpointed in PostgreSQL), against the sandbox execution inside it.
// Every turn's own execution is timed in place (SessionExecutionsService.execute, the
// same path as POST /v1/sessions/:id/executions), so "overhead" is per turn: the turn's
// time minus its execution's. The same code through the REST API on the same warm
// session is the baseline, in the same run.
//
// Target: under 15 ms of overhead per tool call at p50.
//
//   npm run build && npm run bench:agent -- [--turns 200] [--warmup 20]
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { parseArgs } from 'node:util';
import { AGENT_RUNTIME, ScriptedModelProvider, type AgentRuntime, type ScriptedTurn } from '@drydock/agents';
import { SessionExecutionsService } from '@drydock/sessions';
import { api, BenchError, fixed, startInProcess, summarize, table, timeMethod } from '../lib/harness.js';

const TARGET_OVERHEAD_MS = 15;
const CODE = 'print(1)';

const USAGE = `Usage: node dist/bench/agent/run.js [--turns N] [--warmup N]

  --turns <n>    measured tool-calling turns            (BENCH_TURNS, default 200)
  --warmup <n>   turns run first and not measured       (BENCH_WARMUP, default 20)

Boots a gateway (with a scripted model) and a worker in this process against
DATABASE_URL and REDIS_URL (the local dev services by default).`;

function options() {
  const { values } = parseArgs({ options: { turns: { type: 'string' }, warmup: { type: 'string' }, help: { type: 'boolean', short: 'h' } } });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const int = (name: string, raw: string | undefined, def: number) => {
    const value = raw === undefined || raw === '' ? def : Number(raw);
    if (!Number.isInteger(value) || value < 1) throw new BenchError(`${name} must be a whole number >= 1 (got "${raw}")\n\n${USAGE}`);
    return value;
  };
  return {
    turns: int('--turns', values.turns ?? process.env.BENCH_TURNS, 200),
    warmup: int('--warmup', values.warmup ?? process.env.BENCH_WARMUP, 20),
  };
}

// Step 0 calls execute_python, step 1 answers: one tool call per turn.
let callCounter = 0;
const script = (turn: ScriptedTurn) =>
  turn.step === 0
    ? new AIMessage({ content: '', tool_calls: [{ id: `call_${++callCounter}`, name: 'execute_python', args: { code: CODE }, type: 'tool_call' }] })
    : new AIMessage('done');

async function main() {
  const opts = options();
  const platform = await startInProcess({}, { chatModels: new ScriptedModelProvider(() => script) });
  try {
    const admin = await api(platform.url, platform.adminKey, 'POST', '/admin/tenants', { name: `bench-agent-${Date.now()}` });
    if (admin.status !== 201) throw new BenchError(`tenant create failed: ${JSON.stringify(admin.body)}`);
    const { id: tenantId, apiKey } = admin.body as { id: string; apiKey: string };
    const threadId = `bench-agent-${Date.now()}`;
    const runtime = platform.gateway.get<AgentRuntime>(AGENT_RUNTIME);

    let execMs: number | null = null;
    timeMethod(SessionExecutionsService.prototype, 'execute', (ms) => (execMs = ms));

    const turn = async () => {
      execMs = null;
      const config = await runtime.runConfig(tenantId, threadId, 'agent');
      const started = performance.now();
      const state = (await runtime.graph.invoke({ messages: [new HumanMessage('go')] }, config)) as { messages: { content: unknown }[] };
      const total = performance.now() - started;
      const reply = String(state.messages.at(-2)?.content ?? '');
      if (!reply.includes('1')) throw new BenchError(`the tool call did not print 1: ${reply}`);
      if (execMs === null) throw new BenchError('no sandbox execution was timed inside the turn');
      return { total, exec: execMs as number };
    };

    for (let i = 0; i < opts.warmup; i++) await turn();
    const totals: number[] = [];
    const execs: number[] = [];
    const overheads: number[] = [];
    for (let i = 0; i < opts.turns; i++) {
      const { total, exec } = await turn();
      totals.push(total);
      execs.push(exec);
      overheads.push(total - exec);
    }

    // Baseline: the same code through the REST API, on the same (now warm) session.
    const sessions = await api(platform.url, apiKey, 'GET', '/v1/sessions');
    const session = (sessions.body.sessions as Array<{ id: string; threadId: string }>).find((s) => s.threadId === threadId);
    if (!session) throw new BenchError('the agent thread has no session');
    const rest: number[] = [];
    for (let i = 0; i < opts.turns; i++) {
      const started = performance.now();
      const res = await api(platform.url, apiKey, 'POST', `/v1/sessions/${session.id}/executions`, { code: CODE });
      rest.push(performance.now() - started);
      if (res.status !== 200 || res.body.stdout !== '1\n') throw new BenchError(`REST execution failed: ${JSON.stringify(res.body)}`);
    }

    const row = (name: string, samples: number[]) => {
      const s = summarize(samples);
      return [name, fixed(s.p50), fixed(s.p90), fixed(s.p99), fixed(s.mean)];
    };
    console.log(`agent turn with one execute_python call, ${opts.turns} turns after ${opts.warmup} warm-up (ms)\n`);
    console.log(
      table(
        ['measure', 'p50', 'p90', 'p99', 'mean'],
        [
          row('turn, end to end', totals),
          row('  its sandbox execution', execs),
          row('  Drydock agent overhead', overheads),
          row('REST execution (baseline)', rest),
        ],
      ),
    );
    const p50 = summarize(overheads).p50;
    console.log(
      `\noverhead per tool call p50: ${fixed(p50)} ms (target < ${TARGET_OVERHEAD_MS} ms: ${p50 < TARGET_OVERHEAD_MS ? 'met' : 'MISSED'}); ` +
        `turn / REST execution at p50: ${fixed(summarize(totals).p50 / summarize(rest).p50)}x`,
    );
  } finally {
    await platform.close();
  }
}

main().catch((error) => {
  console.error(error instanceof BenchError ? `bench: ${error.message}` : error);
  process.exit(1);
});
