// bench/memory: resident memory of the gateway and of a worker with live sessions
// (issue 17: "the gateway and a worker with 50 live sessions each stay under 300 MB RSS").
//
//   npm run build && npm run bench:memory -- --url http://127.0.0.1:8080 [--worker-metrics-url URL] [--sessions 50]
//
// Reads prom-client's process_resident_memory_bytes (prefixed drydock_) from the
// gateway's /metrics (admin key) and from the worker's operator port (/metrics), before
// any session of the bench, with `--sessions` live sessions (each warmed with one
// execution), and after deleting them. The sandboxes' own memory (docker stats) is
// printed as context. Without --url the gateway and the worker share this process: one
// RSS for both, printed for completeness only (the target is per process).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { api, BenchError, createTenant, deleteTenant, fixed, openTarget, readArgs, runMain, table, TARGET_ARGS, wholeNumber } from '../lib/harness.js';
import { defaultWorkerMetricsUrl, metricValue, scrapeMetrics } from '../lib/process-metrics.js';

const execFileAsync = promisify(execFile);
const TARGET_MB = 300;
const MB = 1024 * 1024;

const USAGE = `usage: npm run bench:memory -- [options]
  --sessions <n>            live sessions to hold                          (default 50)
  --parallel <n>            sessions created at once                        (default 4)
  --settle <s>              wait before each reading                        (default 3)
  --url <url>               the running gateway (separate processes); without it, both run in this process
  --admin-key <key>         its admin key                                   (else DRYDOCK_ADMIN_KEY)
  --worker-metrics-url <u>  the worker's operator port                      (default http://127.0.0.1:<WORKER_METRICS_PORT or 9401>/metrics)
  --no-docker-stats         skip docker stats of the sandboxes`;

interface Reading {
  rss: number;
  heapUsed: number | null;
  sessionsLive: number | null;
}

async function scrape(url: string, key: string | null, what: string): Promise<Reading> {
  const text = await scrapeMetrics(url, key, what);
  const rss = metricValue(text, 'process_resident_memory_bytes');
  if (rss === null) throw new BenchError(`${what}: ${url} has no process_resident_memory_bytes`);
  return { rss, heapUsed: metricValue(text, 'nodejs_heap_size_used_bytes'), sessionsLive: metricValue(text, 'sessions_live') };
}

async function main() {
  const values = readArgs(
    {
      sessions: { type: 'string' },
      parallel: { type: 'string' },
      settle: { type: 'string' },
      ...TARGET_ARGS,
      'worker-metrics-url': { type: 'string' },
      'no-docker-stats': { type: 'boolean' },
    },
    USAGE,
  );
  const count = wholeNumber('--sessions', values.sessions, 50, 1);
  const parallel = wholeNumber('--parallel', values.parallel, 4, 1);
  const settleMs = wholeNumber('--settle', values.settle, 3, 0) * 1000;
  const workerMetricsUrl = values['worker-metrics-url'] ?? defaultWorkerMetricsUrl();

  const platform = await openTarget({ url: values.url, adminKey: values['admin-key'] }, { WORKER_ORPHAN_SWEEP_MS: process.env.WORKER_ORPHAN_SWEEP_MS ?? '0' });
  // With --url the gateway and the worker are processes of their own, each with its RSS.
  const separate = platform.local === null;
  const mode = separate ? `${platform.mode}; worker metrics at ${workerMetricsUrl}` : `${platform.mode} (one process: one RSS for both)`;
  // Each reading: the gateway's and the worker's (with --url), or this process's.
  const read = async (): Promise<{ gateway: Reading; worker: Reading | null }> => {
    if (settleMs) await new Promise((resolve) => setTimeout(resolve, settleMs));
    const gateway = await scrape(`${platform.url}/metrics`, platform.adminKey, 'gateway');
    return { gateway, worker: separate ? await scrape(workerMetricsUrl, null, 'worker') : null };
  };

  let tenantId: string | null = null;
  let key = '';
  const sessions: string[] = [];
  let cleaned = false;
  const cleanup = async () => {
    if (cleaned) return;
    cleaned = true;
    for (const id of sessions.splice(0)) {
      await api(platform.url, key, 'DELETE', `/v1/sessions/${id}`).catch(() => undefined);
    }
    if (tenantId) await deleteTenant(platform, tenantId);
  };
  const onSignal = (signal: NodeJS.Signals) => {
    console.error(`\n${signal}: deleting the bench's sessions and tenant`);
    void cleanup().finally(() => process.exit(130));
  };
  process.once('SIGINT', onSignal);
  process.once('SIGTERM', onSignal);

  try {
    console.log(`bench/memory: ${mode}; ${count} sessions`);
    const before = await read();

    const tenant = await createTenant(platform, {
      name: `bench-memory-${Date.now()}`,
      limits: { maxSessions: count + 4, concurrentExecutions: count * 2, requestsPerMinute: 10_000_000 },
    });
    tenantId = tenant.id;
    key = tenant.apiKey;
    const started = performance.now();
    let next = 0;
    await Promise.all(
      Array.from({ length: Math.min(parallel, count) }, async () => {
        while (next < count) {
          const i = next++;
          const created = await api(platform.url, key, 'POST', '/v1/sessions', { threadId: `bench-memory-${i}` });
          if (created.status !== 201 && created.status !== 200) {
            throw new BenchError(`POST /v1/sessions (session ${i + 1} of ${count}) answered ${created.status}: ${JSON.stringify(created.body)} (WORKER_CAPACITY?)`);
          }
          sessions.push(created.body.id);
          const warm = await api(platform.url, key, 'POST', `/v1/sessions/${created.body.id}/executions`, { code: 'print(1)' });
          if (warm.body?.stdout !== '1\n') throw new BenchError(`warm-up run answered ${warm.status}: ${JSON.stringify(warm.body).slice(0, 300)}`);
        }
      }),
    );
    console.log(`${count} sessions created and warmed in ${fixed((performance.now() - started) / 1000, 1)} s`);
    const live = await read();

    let containers: string | null = null;
    if (!values['no-docker-stats']) {
      const listed = await api(platform.url, platform.adminKey, 'GET', '/admin/sessions');
      const ids = ((listed.body?.sessions ?? []) as { id: string; containerId: string | null }[])
        .filter((s) => sessions.includes(s.id) && s.containerId)
        .map((s) => s.containerId!);
      try {
        const { stdout } = await execFileAsync('docker', ['stats', '--no-stream', '--format', '{{.MemUsage}}', ...ids], { encoding: 'utf8' });
        const used = stdout
          .trim()
          .split('\n')
          .map((line) => parseSize(line.split('/')[0]!.trim()));
        const total = used.reduce((s, x) => s + x, 0);
        containers = `${ids.length} sandbox containers (docker stats): ${fixed(total / MB, 0)} MiB in all, ${fixed(total / used.length / MB, 1)} MiB each on average (context: not part of the target)`;
      } catch (error) {
        containers = `docker stats failed: ${(error as Error).message.split('\n')[0]}`;
      }
    }

    for (const id of sessions.splice(0)) {
      const res = await api(platform.url, key, 'DELETE', `/v1/sessions/${id}`);
      if (res.status >= 300 && res.status !== 404) throw new BenchError(`DELETE /v1/sessions/${id} answered ${res.status}: ${JSON.stringify(res.body)}`);
    }
    const after = await read();

    const mb = (r: Reading | null) => (r ? fixed(r.rss / MB, 1) : '-');
    const heap = (r: Reading | null) => (r?.heapUsed == null ? '-' : fixed(r.heapUsed / MB, 1));
    const verdict = (r: Reading) => (r.rss < TARGET_MB * MB ? 'met' : 'MISSED');
    const rows = [
      [separate ? 'gateway' : 'gateway + worker (one process)', mb(before.gateway), mb(live.gateway), mb(after.gateway), heap(live.gateway), separate ? verdict(live.gateway) : 'n/a'],
    ];
    if (live.worker) rows.push(['worker', mb(before.worker), mb(live.worker), mb(after.worker), heap(live.worker), verdict(live.worker)]);
    console.log(`\nresident memory (process_resident_memory_bytes, MB = MiB; read ${settleMs / 1000} s after each step)\n`);
    console.log(table(['process', 'before', `${count} sessions`, 'after delete', 'heap used', `< ${TARGET_MB} MB`], rows));
    if (live.worker?.sessionsLive != null) {
      console.log(`\nworker drydock_sessions_live: ${before.worker?.sessionsLive} before, ${live.worker.sessionsLive} with the sessions, ${after.worker?.sessionsLive} after`);
    }
    if (containers) console.log(containers);
    if (!separate) console.log('(in this process the gateway, the worker and this client share one RSS; run with --url for the per-process target)');
  } finally {
    await cleanup();
    await platform.close();
  }
}

// docker stats sizes: "12.5MiB", "1.2GiB", "512KiB", "100B".
function parseSize(text: string): number {
  const match = /^([\d.]+)\s*([KMGT]?i?B)$/i.exec(text);
  if (!match) return NaN;
  const units: Record<string, number> = { B: 1, KIB: 1024, MIB: MB, GIB: 1024 * MB, TIB: 1024 * 1024 * MB, KB: 1e3, MB: 1e6, GB: 1e9, TB: 1e12 };
  return Number(match[1]) * (units[match[2]!.toUpperCase()] ?? NaN);
}

runMain('bench/memory', main);
