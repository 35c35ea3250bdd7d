// Agent overhead benchmark (issues 5 and 17): one tool-calling turn end to end, with a
// scripted model (model node -> tool node -> execute_python in the thread's sandbox ->
// model node -> answer, checkpointed in PostgreSQL), against the sandbox execution inside
// it. The same code through the REST API on the same warm session is the baseline, in
// the same run.
//
// In this process (default): a ScriptedModelProvider is injected into the gateway, every
// turn is graph.invoke() and its own execution is timed in place
// (SessionExecutionsService.execute, the same path as POST /v1/sessions/:id/executions),
// so "overhead" is per turn: the turn's time minus its execution's.
//
// Against a running deployment (--url): the bench starts a scripted OpenAI-compatible
// chat completions server (bench/lib/fake-model-server.ts) and prints the environment the
// gateway must be started with. Every turn is POST /threads/:id/runs/wait; the tool's
// execution is read back from GET /admin/executions (its durationMs, as the platform
// reports it), and the REST baseline's fixed cost (client time minus durationMs) is
// subtracted too: overhead = turn - durationMs - p50(REST time - REST durationMs), i.e.
// what a tool call through the agent costs beyond a REST execution of the same code.
// The REST executions are interleaved with the turns (one after each), so both are
// measured in the same minutes of the machine.
//
// Target: under 10 ms of overhead per tool call at p50 (issue 17; issue 5 had 15 ms).
//
//   npm run build && npm run bench:agent -- [--turns 200] [--warmup 20] [--url URL --admin-key KEY --model-port N]
import { AIMessage, HumanMessage } from '@langchain/core/messages';
import { AGENT_RUNTIME, ScriptedModelProvider, type AgentRuntime, type ScriptedTurn } from '@drydock/agents';
import { SessionExecutionsService } from '@drydock/sessions';
import { startScriptedModelServer } from '../lib/fake-model-server.js';
import { machineProbeLine } from '../lib/machine-probe.js';
import { defaultWorkerMetricsUrl, deploymentCpuMeters } from '../lib/process-metrics.js';
import {
  api,
  BenchError,
  createTenant,
  deleteTenant,
  fixed,
  openTarget,
  readArgs,
  runMain,
  summarize,
  table,
  TARGET_ARGS,
  timeMethod,
  wholeNumber,
  type BenchTarget,
  type InProcessPlatform,
} from '../lib/harness.js';

const TARGET_OVERHEAD_MS = 10;
const CODE = 'print(1)';
const MODEL_NAME = 'bench-scripted';
const DEFAULT_MODEL_PORT = 18097;
// Warm-up turns. A gateway process just started runs its first few hundred agent turns
// slower: V8 is still compiling LangChain's and LangGraph's code, on background threads
// that share the machine's two cores with the turn. Measured against one deployment
// (four runs of 200 turns after 20 warm-up, one after the other): overhead p50 17.1,
// 14.1, 13.6, 12.8 ms, the gateway's background threads 1,120, 870, 460, 390 ms. A
// long-running gateway is the steady state; 500 turns reach it.
const DEFAULT_WARMUP = 500;
// Warm-up turns per thread: the warm-up's threads stay short, as conversations are (with
// --url their sessions are ended when each is done).
const WARMUP_TURNS_PER_THREAD = 50;

const USAGE = `Usage: node dist/bench/agent/run.js [--turns N] [--warmup N] [--url URL [--admin-key KEY] [--model-port N]]

  --turns <n>       measured tool-calling turns            (BENCH_TURNS, default 200)
  --warmup <n>      turns run first and not measured, on threads of their own
                    (BENCH_WARMUP, default ${DEFAULT_WARMUP}): a gateway just started spends its
                    first few hundred turns compiling (see bench/README.md)
  --turns-per-thread <n>  with --url: a new thread every n turns, its first turn (which
                    starts the thread's session) not measured; 0: every turn on one
                    thread, which then grows by 4 messages a turn (BENCH_TURNS_PER_THREAD, default 0)
  --stream          with --url: each turn is POST /threads/:id/runs/stream with stream_mode
                    "values" (the state after every step, read to the end) instead of runs/wait
  --url <url>       bench this running gateway (separate processes) instead of one in this process
  --admin-key <k>   its admin key                          (else DRYDOCK_ADMIN_KEY)
  --model-port <n>  port of the scripted model server this bench starts with --url
                    (BENCH_MODEL_PORT, default ${DEFAULT_MODEL_PORT}); start the gateway with
                    AGENT_MODEL_BASE_URL=http://127.0.0.1:<n>/v1 AGENT_MODEL=${MODEL_NAME}
  --worker-metrics-url <u>  with --url: the worker's operator port, for its CPU per turn
                    (default http://127.0.0.1:<WORKER_METRICS_PORT or 9401>/metrics)

Without --url: boots a gateway (with a scripted model) and a worker in this process
against DATABASE_URL and REDIS_URL (the local dev services by default).`;

function options() {
  const values = readArgs(
    { turns: { type: 'string' }, warmup: { type: 'string' }, 'turns-per-thread': { type: 'string' }, stream: { type: 'boolean' }, ...TARGET_ARGS, 'model-port': { type: 'string' }, 'worker-metrics-url': { type: 'string' } },
    USAGE,
  );
  const env = process.env;
  return {
    turns: wholeNumber('--turns', values.turns ?? env.BENCH_TURNS, 200, 1),
    warmup: wholeNumber('--warmup', values.warmup ?? env.BENCH_WARMUP, DEFAULT_WARMUP, 1),
    turnsPerThread: wholeNumber('--turns-per-thread', values['turns-per-thread'] ?? env.BENCH_TURNS_PER_THREAD, 0, 0),
    stream: values.stream === true,
    url: values.url,
    adminKey: values['admin-key'],
    modelPort: wholeNumber('--model-port', values['model-port'] ?? env.BENCH_MODEL_PORT, DEFAULT_MODEL_PORT, 0),
    workerMetricsUrl: values['worker-metrics-url'] ?? defaultWorkerMetricsUrl(),
  };
}

type Options = ReturnType<typeof options>;

const row = (name: string, samples: number[]) => {
  const s = summarize(samples);
  return [name, fixed(s.p50), fixed(s.p90), fixed(s.p99), fixed(s.mean)];
};
const verdict = (p50: number) => `(target < ${TARGET_OVERHEAD_MS} ms: ${p50 < TARGET_OVERHEAD_MS ? 'met' : 'MISSED'})`;

// Step 0 calls execute_python, step 1 answers: one tool call per turn.
let callCounter = 0;
const script = (turn: ScriptedTurn) =>
  turn.step === 0
    ? new AIMessage({ content: '', tool_calls: [{ id: `call_${++callCounter}`, name: 'execute_python', args: { code: CODE }, type: 'tool_call' }] })
    : new AIMessage('done');

async function inProcess(opts: Options, platform: BenchTarget, local: InProcessPlatform) {
  if (opts.turnsPerThread > 0 || opts.stream) throw new BenchError('--turns-per-thread and --stream are for a running deployment (--url)');
  let created: string | null = null;
  try {
    const { id: tenantId, apiKey } = await createTenant(platform, { name: `bench-agent-${Date.now()}` });
    created = tenantId;
    const threadId = `bench-agent-${Date.now()}`;
    const runtime = local.gateway.get<AgentRuntime>(AGENT_RUNTIME);

    let execMs: number | null = null;
    timeMethod(SessionExecutionsService.prototype, 'execute', (ms) => (execMs = ms));

    const turn = async (thread = threadId) => {
      execMs = null;
      const config = await runtime.runConfig(tenantId, thread, 'agent');
      const started = performance.now();
      const state = (await runtime.graph.invoke({ messages: [new HumanMessage('go')] }, config)) as { messages: { content: unknown }[] };
      const total = performance.now() - started;
      const reply = String(state.messages.at(-2)?.content ?? '');
      if (!reply.includes('1')) throw new BenchError(`the tool call did not print 1: ${reply}`);
      if (execMs === null) throw new BenchError('no sandbox execution was timed inside the turn');
      return { total, exec: execMs as number };
    };

    // The warm-up on threads of its own, as short as with --url; the measured thread's
    // first turn starts its session, and is not measured.
    for (let i = 0; i < opts.warmup; i++) await turn(`${threadId}-warmup-${Math.floor(i / WARMUP_TURNS_PER_THREAD)}`);
    await turn();
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

    console.log(`agent turn with one execute_python call, ${platform.mode}, ${opts.turns} turns after ${opts.warmup} warm-up (ms)\n`);
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
      `\noverhead per tool call p50: ${fixed(p50)} ms ${verdict(p50)}; ` +
        `turn / REST execution at p50: ${fixed(summarize(totals).p50 / summarize(rest).p50)}x`,
    );
  } finally {
    // Ends the session and deletes the tenant's checkpoints and executions.
    if (created) await deleteTenant(platform, created);
  }
}

async function againstUrl(opts: Options, platform: BenchTarget) {
  const base = platform.url;
  const model = await startScriptedModelServer({ port: opts.modelPort, code: CODE }).catch((error: Error) => {
    throw new BenchError(`the scripted model server cannot listen on 127.0.0.1:${opts.modelPort}: ${error.message} (choose another --model-port)`);
  });
  const envLine = `AGENT_MODEL_BASE_URL=${model.baseUrl} AGENT_MODEL=${MODEL_NAME} AGENT_MODEL_API_KEY=bench-not-needed`;
  console.log(`bench/agent: ${platform.mode}; scripted model server at ${model.baseUrl}`);
  console.log(`the gateway must have been started with:\n  ${envLine}\n`);
  let tenantId: string | null = null;
  try {
    const tenant = await createTenant(platform, { name: `bench-agent-${Date.now()}`, limits: { requestsPerMinute: 10_000_000 } });
    tenantId = tenant.id;
    const key = tenant.apiKey;
    const newThread = async () => {
      const thread = await api(base, key, 'POST', '/threads', {});
      if (thread.status !== 200 || !thread.body?.thread_id) throw new BenchError(`POST /threads answered ${thread.status}: ${JSON.stringify(thread.body)}`);
      return thread.body.thread_id as string;
    };
    let threadId = '';
    let onThread = 0;

    let lastExecution: string | null = null;
    const turn = async (): Promise<{ total: number; parsed: number; chars: number; durationMs: number; sessionId: string; modelMs: number[] }> => {
      if (opts.turnsPerThread > 0 && onThread === opts.turnsPerThread) {
        threadId = await newThread();
        onThread = 0;
        // The thread's first turn starts its session: not a warm tool call.
        await turn();
      }
      onThread++;
      const before = model.stats.requests;
      const handledBefore = model.stats.handleMs.length;
      const started = performance.now();
      const input = { messages: [{ role: 'user', content: 'go' }] };
      const res = opts.stream
        ? await api(base, key, 'POST', `/threads/${threadId}/runs/stream`, { assistant_id: 'agent', input, stream_mode: 'values' })
        : await api(base, key, 'POST', `/threads/${threadId}/runs/wait`, { assistant_id: 'agent', input });
      // runs/stream: the state after the last step is the last `values` event.
      if (opts.stream && res.status === 200) res.body = lastSseData(res.text, 'values') ?? { __error__: res.text.slice(-500) };
      // Until the answer's last byte; and, for information, with the client's decoding and
      // parsing of it (the thread's whole state: it grows with the thread).
      const total = res.receivedAt - started;
      const parsed = performance.now() - started;
      if (res.status === 503 && res.body?.error?.code === 'MODEL_NOT_CONFIGURED') {
        throw new BenchError(`the gateway has no model: restart it with\n  ${envLine}`);
      }
      if (res.status !== 200 || res.body?.__error__) {
        throw new BenchError(
          `${opts.stream ? 'runs/stream' : 'runs/wait'} answered ${res.status}: ${JSON.stringify(res.body).slice(0, 500)}` +
            (model.stats.requests === before ? `\n(the scripted model got no request: was the gateway started with\n  ${envLine} ?)` : ''),
        );
      }
      if (model.stats.requests - before !== 2) {
        throw new BenchError(`the scripted model answered ${model.stats.requests - before} requests in a turn, not 2: the gateway's model is elsewhere; start it with\n  ${envLine}`);
      }
      const messages = res.body.messages as Array<{ type: string; content: unknown }>;
      const tool = messages.at(-2);
      if (tool?.type !== 'tool' || !String(tool.content).includes('1')) throw new BenchError(`the tool call did not print 1: ${JSON.stringify(tool).slice(0, 300)}`);
      // The execution the tool ran, as the platform recorded it (newest first).
      const listed = await api(base, platform.adminKey, 'GET', `/admin/executions?tenantId=${tenantId}&limit=1`);
      const execution = listed.body?.executions?.[0] as { id: string; sessionId: string; durationMs: number | null; stdout: string } | undefined;
      if (!execution || execution.id === lastExecution || execution.durationMs === null) {
        throw new BenchError(`GET /admin/executions shows no new finished execution for the turn: ${JSON.stringify(listed.body).slice(0, 300)}`);
      }
      lastExecution = execution.id;
      // The scripted model server's own time for each of this turn's two requests.
      const modelMs = model.stats.handleMs.slice(handledBefore);
      return { total, parsed, chars: res.text.length, durationMs: execution.durationMs, sessionId: execution.sessionId, modelMs };
    };

    // The warm-up, on threads of its own (each session ended after its thread); then the
    // measured thread, whose first turn starts its session and is not measured.
    let sessionId = '';
    const warmupPerThread = opts.turnsPerThread > 0 ? opts.turnsPerThread : WARMUP_TURNS_PER_THREAD;
    for (let done = 0; done < opts.warmup; ) {
      threadId = await newThread();
      onThread = 0;
      const n = Math.min(warmupPerThread, opts.warmup - done);
      for (let i = 0; i < n; i++) sessionId = (await turn()).sessionId;
      done += n;
      const ended = await api(base, key, 'DELETE', `/v1/sessions/${sessionId}`);
      if (ended.status !== 204) throw new BenchError(`DELETE /v1/sessions/${sessionId} answered ${ended.status}: ${JSON.stringify(ended.body)}`);
    }
    threadId = await newThread();
    onThread = 0;
    sessionId = (await turn()).sessionId;
    const totals: number[] = [];
    const parsedTotals: number[] = [];
    const answerKChars: number[] = [];
    const durations: number[] = [];
    const modelMs: number[] = [];
    const modelPerTurn: number[] = [];
    // The same code through the REST API, on the thread's (warm) session.
    type RestSamples = { ms: number[]; durations: number[]; fixed: number[] };
    const restSamples = (): RestSamples => ({ ms: [], durations: [], fixed: [] });
    const restExecution = async (into: RestSamples) => {
      const started = performance.now();
      const res = await api(base, key, 'POST', `/v1/sessions/${sessionId}/executions`, { code: CODE });
      const ms = res.receivedAt - started;
      if (res.status !== 200 || res.body.stdout !== '1\n') throw new BenchError(`REST execution failed: ${JSON.stringify(res.body)}`);
      into.ms.push(ms);
      into.durations.push(res.body.durationMs ?? 0);
      into.fixed.push(ms - (res.body.durationMs ?? 0));
    };
    // Baseline: one REST execution after each turn, so the turns and the baseline they
    // are measured against see the same minutes of this machine (its busy and quiet
    // spells move both by half; bench/README.md, agent).
    const rest = restSamples();
    const pairCpu = await deploymentCpuMeters(platform, opts.workerMetricsUrl);
    for (let i = 0; i < opts.turns; i++) {
      const t = await turn();
      totals.push(t.total);
      parsedTotals.push(t.parsed);
      answerKChars.push(t.chars / 1000);
      durations.push(t.durationMs);
      modelMs.push(...t.modelMs);
      modelPerTurn.push(t.modelMs.reduce((sum, ms) => sum + ms, 0));
      sessionId = t.sessionId;
      await restExecution(rest);
    }
    const pairCpuMs = await Promise.all(pairCpu.meters.map((meter) => meter.perUnit(opts.turns)));

    // REST executions alone, after the turns: their CPU per execution (the turns' CPU is
    // the pairs' less this), and the baseline as measured before the tenth sitting.
    const restAfter = restSamples();
    const restCpu = await deploymentCpuMeters(platform, opts.workerMetricsUrl);
    for (let i = 0; i < opts.turns; i++) await restExecution(restAfter);
    const restCpuMs = await Promise.all(restCpu.meters.map((meter) => meter.perUnit(opts.turns)));
    const cpuLine = (values: number[]) => pairCpu.meters.map((meter, i) => `${meter.what} ${values[i]!.toFixed(2)} ms`).join(', ');
    const turnCpuLine = cpuLine(pairCpuMs.map((ms, i) => ms - restCpuMs[i]!));
    const restCpuLine = cpuLine(restCpuMs);

    const fixedCost = summarize(rest.fixed).p50;
    const overheads = totals.map((t, i) => t - durations[i]! - fixedCost);
    const upper = totals.map((t, i) => t - durations[i]!);
    const afterFixedCost = summarize(restAfter.fixed).p50;

    const route = opts.stream ? 'runs/stream (stream_mode "values")' : 'runs/wait';
    console.log(`agent turn with one execute_python call via POST /threads/:id/${route}, ${opts.turns} turns after ${opts.warmup} warm-up (ms)\n`);
    console.log(
      table(
        ['measure', 'p50', 'p90', 'p99', 'mean'],
        [
          row(`turn, end to end (${opts.stream ? 'runs/stream' : 'runs/wait'})`, totals),
          row('  with the client decoding and parsing it', parsedTotals),
          row('  the answer (thousands of characters)', answerKChars),
          row('  its execution (durationMs)', durations),
          row('  turn - durationMs', upper),
          row('  Drydock agent overhead', overheads),
          row('  scripted model, per request', modelMs),
          row('  overhead - the model server\'s own time', overheads.map((o, i) => o - modelPerTurn[i]!)),
          row('REST execution after each turn (baseline)', rest.ms),
          row('  its durationMs', rest.durations),
          row('  REST time - durationMs', rest.fixed),
          row('REST executions alone, after the turns', restAfter.ms),
          row('  REST time - durationMs', restAfter.fixed),
        ],
      ),
    );
    const p50 = summarize(overheads).p50;
    console.log(
      `\nagent overhead = turn - its durationMs - p50(REST time - REST durationMs) = turn - durationMs - ${fixed(fixedCost)} ms` +
        `\n(REST executions interleaved with the turns; against the REST executions run alone after them, ${fixed(afterFixedCost)} ms,` +
        ` as the bench measured before the tenth sitting: overhead p50 ${fixed(summarize(upper).p50 - afterFixedCost)} ms)` +
        `\noverhead per tool call p50: ${fixed(p50)} ms ${verdict(p50)}; turn / REST execution at p50: ${fixed(summarize(totals).p50 / summarize(rest.ms).p50)}x` +
        `\n(the overhead includes the gateway's two HTTP calls to the scripted model and the server's own time, shown per request;` +
        `\n "overhead - the model server's own time" leaves that time out, for information: the target is judged on the overhead;` +
        `\n ${model.stats.streamed} of ${model.stats.requests} model requests were streamed)`,
    );
    if (pairCpu.meters.length) {
      console.log(
        `\nCPU (process_cpu_seconds_total) per turn: ${turnCpuLine} (with the bench's GET /admin/executions per turn;` +
          ` the measured loop's CPU per turn and its REST execution, less a REST execution's); per REST execution: ${restCpuLine}`,
      );
    }
    if (pairCpu.note) console.log(pairCpu.note);
    console.log(machineProbeLine());
  } finally {
    // Ends the tenant's sessions and deletes its threads, checkpoints and executions.
    if (tenantId) await deleteTenant(platform, tenantId);
    await model.close();
  }
}

async function main() {
  const opts = options();
  // In this process the gateway answers with the scripted model; with --url its model is
  // the scripted server againstUrl starts.
  const platform = await openTarget(opts, {}, { chatModels: new ScriptedModelProvider(() => script) });
  try {
    if (platform.local) await inProcess(opts, platform, platform.local);
    else await againstUrl(opts, platform);
  } finally {
    await platform.close();
  }
}

runMain('bench/agent', main);

// The data of the last event of this name in a server-sent events body.
function lastSseData(text: string, event: string): unknown {
  const marker = `event: ${event}\ndata: `;
  const at = text.lastIndexOf(marker);
  if (at < 0) return undefined;
  const end = text.indexOf('\n', at + marker.length);
  return JSON.parse(text.slice(at + marker.length, end < 0 ? undefined : end));
}
