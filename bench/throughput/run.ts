// bench/throughput: trivial executions per second under concurrent load, against the same
// load through `docker exec` into the same containers, in the same run.
//
//   npm run build && npm run bench:throughput -- [options]     (or --url http://127.0.0.1:8080)
//
// `--sessions` sessions (default limits: from the warm pool when there is one), each
// warmed with one run, then `--clients` loops post `print(1)` to them round-robin for
// `--seconds`; every answer must be ok with "1\n". The baseline runs as many loops of
// `docker exec -u 10001:10001 <container> python3 -c 'print(1)'` over the same containers
// for `--docker-seconds`. The client uses node:http with keep-alive; it shares the
// machine's cores with the gateway and the workers, as a client on the same host would.
import { execFile } from 'node:child_process';
import { Agent } from 'node:http';
import { parseArgs } from 'node:util';
import { api, BenchError, containerOfSession, createSession, createTenant, fixed, openTarget, postPrintOne, summarize, table, TARGET_ARGS } from '../lib/harness.js';
import { cpuPerUnit, defaultWorkerMetricsUrl, deploymentCpuMeters } from '../lib/process-metrics.js';
import { hostCpuMeter, machineProbeLine } from '../lib/machine-probe.js';

const USAGE = `usage: npm run bench:throughput -- [options]
  --sessions <n>        sessions the load is spread over        (default 16)
  --clients <n>         concurrent client loops                  (default 16)
  --seconds <s>         Drydock load duration                    (default 10)
  --docker-seconds <s>  docker exec baseline duration            (default 5)
  --url <url>           bench this running gateway instead of one in this process
  --admin-key <key>     its admin key (else DRYDOCK_ADMIN_KEY)
  --worker-metrics-url <u>  with --url: the worker's operator port, for its CPU per execution
                        (default http://127.0.0.1:<WORKER_METRICS_PORT or 9401>/metrics)`;

async function main() {
  const { values } = parseArgs({
    options: {
      sessions: { type: 'string' },
      clients: { type: 'string' },
      seconds: { type: 'string' },
      'docker-seconds': { type: 'string' },
      ...TARGET_ARGS,
      'worker-metrics-url': { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return console.log(USAGE);
  const whole = (name: string, value: string | undefined, fallback: number) => {
    const n = Number(value ?? fallback);
    if (!Number.isInteger(n) || n < 1) throw new BenchError(`--${name} must be a positive whole number\n${USAGE}`);
    return n;
  };
  const sessionsN = whole('sessions', values.sessions, 16);
  const clients = whole('clients', values.clients, 16);
  const seconds = whole('seconds', values.seconds, 10);
  const dockerSeconds = whole('docker-seconds', values['docker-seconds'], 5);
  const platform = await openTarget({ url: values.url, adminKey: values['admin-key'] });
  try {
    const { apiKey: key } = await createTenant(platform, {
      name: `bench-throughput-${Date.now()}`,
      limits: { maxSessions: sessionsN + 4, concurrentExecutions: clients * 2, requestsPerMinute: 10_000_000 },
    });
    const sessions: { id: string; container: string }[] = [];
    for (let i = 0; i < sessionsN; i++) {
      const { id } = await createSession(platform.url, key, { threadId: `bench-throughput-${i}` });
      const warm = await api(platform.url, key, 'POST', `/v1/sessions/${id}/executions`, { code: 'print(1)' });
      if (warm.body?.stdout !== '1\n') throw new BenchError(`warm-up run answered ${JSON.stringify(warm.body)}`);
      sessions.push({ id, container: await containerOfSession(platform.url, platform.adminKey, id) });
    }
    console.log(`bench/throughput: ${platform.mode}; ${sessionsN} sessions, ${clients} clients, ${seconds} s (docker exec ${dockerSeconds} s)`);

    const agent = new Agent({ keepAlive: true, maxSockets: clients });
    const target = new URL(platform.url);
    const post = (sessionId: string) => postPrintOne(agent, target, key, sessionId);
    const cpu = await deploymentCpuMeters(platform, values['worker-metrics-url'] ?? defaultWorkerMetricsUrl());
    const hostCpu = hostCpuMeter();
    const drydock = await load(clients, seconds, (i) => post(sessions[i % sessions.length]!.id));
    const hostCpuLine = hostCpu();
    const cpuLine = cpu.meters.length ? `CPU per execution (process_cpu_seconds_total over the load): ${await cpuPerUnit(cpu.meters, drydock.count)}` : '';
    agent.destroy();
    const docker = await load(clients, dockerSeconds, (i) => dockerExec(sessions[i % sessions.length]!.container));

    const ds = summarize(drydock.latencies);
    const bs = summarize(docker.latencies);
    const row = (name: string, r: { count: number; seconds: number }, s: ReturnType<typeof summarize>) => [
      name,
      String(r.count),
      fixed(r.count / r.seconds, 1),
      fixed(s.p50),
      fixed(s.p90),
      fixed(s.p99),
      fixed(s.max),
    ];
    console.log(
      '\n' +
        table(
          ['', 'runs', 'per second', 'p50 ms', 'p90 ms', 'p99 ms', 'max ms'],
          [row('drydock POST /executions', drydock, ds), row('docker exec python3 -c', docker, bs)],
        ),
    );
    const rate = drydock.count / drydock.seconds;
    console.log(
      `\nratio (runs per second) ${fixed(rate / (docker.count / docker.seconds), 1)}x docker exec; ` +
        `target >= 500/s with 16 sessions and 16 clients: ${rate >= 500 ? 'MET' : 'MISSED'} (${fixed(rate, 1)}/s)`,
    );
    for (const line of [cpuLine, cpu.note]) if (line) console.log(line);
    if (hostCpuLine) console.log(`load: ${hostCpuLine}`);
    console.log(machineProbeLine());
    for (const session of sessions) await api(platform.url, key, 'DELETE', `/v1/sessions/${session.id}`);
  } finally {
    await platform.close();
  }
}

// `clients` loops calling `once` back to back for `seconds`; every call must succeed.
async function load(clients: number, seconds: number, once: (loop: number) => Promise<void>) {
  const latencies: number[] = [];
  const started = performance.now();
  const until = started + seconds * 1000;
  await Promise.all(
    Array.from({ length: clients }, async (_, loop) => {
      while (performance.now() < until) {
        const t = performance.now();
        await once(loop);
        latencies.push(performance.now() - t);
      }
    }),
  );
  return { count: latencies.length, seconds: (performance.now() - started) / 1000, latencies };
}

function dockerExec(container: string): Promise<void> {
  return new Promise((resolve, reject) =>
    execFile('docker', ['exec', '-u', '10001:10001', container, 'python3', '-c', 'print(1)'], (error, stdout) =>
      error || stdout !== '1\n' ? reject(new BenchError(`docker exec failed: ${error?.message ?? stdout}`)) : resolve(),
    ),
  );
}

main().catch((error) => {
  console.error(error instanceof BenchError ? `bench/throughput: ${error.message}` : error);
  process.exit(1);
});
