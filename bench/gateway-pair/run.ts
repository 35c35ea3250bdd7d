// bench/gateway-pair: two gateways (two builds) in front of the same worker, PostgreSQL
// and Redis, under one load whose requests alternate between them. Reports each
// gateway's CPU per execution (process_cpu_seconds_total) and latency, and the ratio.
//
//   npm run build && npm run bench:gateway-pair -- --a http://127.0.0.1:8080 --b http://127.0.0.1:8090
//
// On this machine a build's figures move by a third from one minute to the next, so two
// builds run one after the other (bench/compare.sh) need many alternating runs to tell
// a change of 10 % from the noise. Here both gateways live through the same seconds:
// every client loop sends its next `print(1)` to the other gateway, so a busy spell
// weighs on both alike and the ratio of their CPU per execution holds still. It judges
// a gateway-only change (the worker is one and the same); both gateways must share the
// database, Redis and the admin key.
import { Agent } from 'node:http';
import { parseArgs } from 'node:util';
import { api, BenchError, createSession, createTenant, fixed, postPrintOne, runMain, summarize, table, wholeNumber } from '../lib/harness.js';
import { startCpuMeter } from '../lib/process-metrics.js';
import { machineProbeLine } from '../lib/machine-probe.js';

const USAGE = `usage: npm run bench:gateway-pair -- --a <url> --b <url> [options]
  --a <url>, --b <url>  the two gateways (same database, Redis, worker and admin key)
  --admin-key <key>     their admin key (else BENCH_ADMIN_KEY, else DRYDOCK_ADMIN_KEY)
  --sessions <n>        sessions the load is spread over          (default 16)
  --clients <n>         concurrent client loops, each alternating  (default 16)
  --seconds <s>         length of one round                        (default 10)
  --rounds <n>          rounds, each measured on its own           (default 3)`;

type Side = 'a' | 'b';

async function main() {
  const { values } = parseArgs({
    options: {
      a: { type: 'string' },
      b: { type: 'string' },
      'admin-key': { type: 'string' },
      sessions: { type: 'string' },
      clients: { type: 'string' },
      seconds: { type: 'string' },
      rounds: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return console.log(USAGE);
  if (!values.a || !values.b) throw new BenchError(`--a and --b are required\n${USAGE}`);
  const sessionsN = wholeNumber('sessions', values.sessions, 16, 1);
  const clients = wholeNumber('clients', values.clients, 16, 1);
  const seconds = wholeNumber('seconds', values.seconds, 10, 1);
  const rounds = wholeNumber('rounds', values.rounds, 3, 1);
  const adminKey = values['admin-key'] ?? process.env.BENCH_ADMIN_KEY ?? process.env.DRYDOCK_ADMIN_KEY;
  if (!adminKey) throw new BenchError('an admin key is needed: --admin-key, BENCH_ADMIN_KEY or DRYDOCK_ADMIN_KEY');
  const urls: Record<Side, URL> = { a: new URL(values.a), b: new URL(values.b) };

  const { apiKey: key } = await createTenant({ url: values.a, adminKey }, {
    name: `bench-gateway-pair-${Date.now()}`,
    limits: { maxSessions: sessionsN + 4, concurrentExecutions: clients * 2, requestsPerMinute: 10_000_000 },
  });
  const sessions: string[] = [];
  for (let i = 0; i < sessionsN; i++) {
    const { id } = await createSession(values.a, key, { threadId: `bench-gateway-pair-${i}` });
    // Each gateway runs once on every session before anything is measured.
    for (const side of ['a', 'b'] as const) {
      const warm = await api(urls[side].origin, key, 'POST', `/v1/sessions/${id}/executions`, { code: 'print(1)' });
      if (warm.body?.stdout !== '1\n') throw new BenchError(`warm-up run on ${side} answered ${warm.status} ${JSON.stringify(warm.body)}`);
    }
    sessions.push(id);
  }
  console.log(`bench/gateway-pair: a ${values.a}, b ${values.b}; ${sessionsN} sessions, ${clients} clients alternating, ${rounds} rounds of ${seconds} s`);

  const agents: Record<Side, Agent> = { a: new Agent({ keepAlive: true, maxSockets: clients }), b: new Agent({ keepAlive: true, maxSockets: clients }) };
  const post = (side: Side, sessionId: string) => postPrintOne(agents[side], urls[side], key, sessionId, `an execution on ${side}`);

  const rows: string[][] = [];
  const ratios: number[] = [];
  for (let round = 1; round <= rounds; round++) {
    console.log(machineProbeLine());
    const meters = { a: await startCpuMeter(`${values.a}/metrics`, adminKey, 'gateway a'), b: await startCpuMeter(`${values.b}/metrics`, adminKey, 'gateway b') };
    const latencies: Record<Side, number[]> = { a: [], b: [] };
    const until = performance.now() + seconds * 1000;
    await Promise.all(
      Array.from({ length: clients }, async (_, loop) => {
        // Half the loops start on each side, so neither goes first more often.
        let side: Side = loop % 2 === 0 ? 'a' : 'b';
        for (let n = 0; performance.now() < until; n++) {
          const t = performance.now();
          await post(side, sessions[(loop + n) % sessions.length]!);
          latencies[side].push(performance.now() - t);
          side = side === 'a' ? 'b' : 'a';
        }
      }),
    );
    const cpu = { a: await meters.a.perUnit(latencies.a.length), b: await meters.b.perUnit(latencies.b.length) };
    ratios.push(cpu.b / cpu.a);
    for (const side of ['a', 'b'] as const) {
      const s = summarize(latencies[side]);
      rows.push([`round ${round} ${side}`, String(latencies[side].length), fixed(latencies[side].length / seconds, 1), fixed(s.p50), fixed(s.p99), fixed(cpu[side], 3)]);
    }
  }
  for (const agent of Object.values(agents)) agent.destroy();
  console.log('\n' + table(['', 'runs', 'per second', 'p50 ms', 'p99 ms', 'gateway CPU ms/exec'], rows));
  console.log(`\ngateway CPU per execution, b / a, per round: ${ratios.map((r) => fixed(r, 3)).join(', ')} (mean ${fixed(ratios.reduce((x, y) => x + y, 0) / ratios.length, 3)})`);
  for (const id of sessions) await api(values.a, key, 'DELETE', `/v1/sessions/${id}`);
}

runMain('bench/gateway-pair', main);
