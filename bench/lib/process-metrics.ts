// A Drydock process's own Prometheus metrics (prom-client's default ones, prefixed
// drydock_): the gateway's /metrics (admin key) and a worker's operator port (no key).
import { BenchError, request } from './harness.js';

// The worker's operator port as scripts/start.sh numbers it, unless --worker-metrics-url.
export function defaultWorkerMetricsUrl(): string {
  return `http://127.0.0.1:${process.env.WORKER_METRICS_PORT || 9401}/metrics`;
}

export async function scrapeMetrics(url: string, key: string | null, what: string): Promise<string> {
  const res = await request(url, { headers: key ? { authorization: `Bearer ${key}` } : {} }).catch((error: Error) => {
    throw new BenchError(`${what}: ${error.message}`);
  });
  const text = await res.text();
  if (res.status !== 200) throw new BenchError(`${what}: GET ${url} answered ${res.status}: ${text.slice(0, 200)}`);
  return text;
}

// A sample's value from the Prometheus text, with or without the drydock_ prefix.
export function metricValue(text: string, name: string): number | null {
  const match = new RegExp(`^(?:drydock_)?${name}(?:\\{[^}]*\\})?\\s+(\\S+)`, 'm').exec(text);
  return match ? Number(match[1]) : null;
}

// One sample's value from a process's metrics; a BenchError when it has none.
async function readMetric(url: string, key: string | null, what: string, name: string): Promise<number> {
  const value = metricValue(await scrapeMetrics(url, key, what), name);
  if (value === null) throw new BenchError(`${what}: ${url} has no ${name}`);
  return value;
}

// A process's CPU time (user + system, process_cpu_seconds_total) over a stretch of a
// bench, per unit of work: a steadier figure than wall time on a machine with busy
// spells, and the one that decides throughput when the cores are full.
export interface CpuMeter {
  what: string;
  // Milliseconds of CPU per unit since the meter started.
  perUnit(units: number): Promise<number>;
}

export async function startCpuMeter(url: string, key: string | null, what: string): Promise<CpuMeter> {
  const read = () => readMetric(url, key, what, 'process_cpu_seconds_total');
  const start = await read();
  return { what, perUnit: async (units) => ((await read()) - start) * 1000 / units };
}

// Meters for the gateway and, when its operator port answers, the worker of a running
// deployment; none for one booted in the bench's own process (its CPU is the client's
// too). `note` says what was left out and why.
export async function deploymentCpuMeters(
  target: { url: string; adminKey: string; local: unknown },
  workerMetricsUrl: string,
): Promise<{ meters: CpuMeter[]; note: string | null }> {
  if (target.local !== null) return { meters: [], note: 'CPU per process: not measured in-process (one process for all)' };
  const meters = [await startCpuMeter(`${target.url}/metrics`, target.adminKey, 'gateway')];
  try {
    meters.push(await startCpuMeter(workerMetricsUrl, null, 'worker'));
    return { meters, note: null };
  } catch (error) {
    return { meters, note: `worker CPU not measured (${(error as Error).message}; set --worker-metrics-url)` };
  }
}

// "gateway 1.05 ms, worker 0.62 ms" per unit.
export async function cpuPerUnit(meters: CpuMeter[], units: number): Promise<string> {
  const parts: string[] = [];
  for (const meter of meters) parts.push(`${meter.what} ${(await meter.perUnit(units)).toFixed(2)} ms`);
  return parts.join(', ');
}

// A process's resident memory (process_resident_memory_bytes) sampled in the background
// over a stretch of a bench (once a second by default: a scrape of the gateway's
// /metrics costs it 5-7 ms, and sampling faster slowed the bench's short requests):
// where it started, its peak, and, once the stretch is over,
// how long the process takes to come back under a limit (V8 gives memory back some
// seconds after the work that grew its heap, not at once: docs/operations.md, "Memory").
export interface RssTrace {
  before: number;
  peak: number;
  atEnd: number;
  // Seconds after the end until the RSS read under `limit`, or null if it did not within
  // `waitS`; `settled` is the last reading.
  underLimitAfterS: number | null;
  settled: number;
}

export async function traceRss(url: string, key: string | null, what: string, everyMs = 1000) {
  const read = () => readMetric(url, key, what, 'process_resident_memory_bytes');
  const before = await read();
  let peak = before;
  let running = true;
  // Its timers are unref'd, so a bench that fails before stop() still exits; stop()
  // does not wait for it for the same reason (an unref'd timer alone would let the
  // process end there).
  void (async () => {
    while (running) {
      await new Promise((resolve) => setTimeout(resolve, everyMs).unref());
      if (running) peak = Math.max(peak, await read().catch(() => 0));
    }
  })();
  return {
    // Ends the stretch, then reads once a second until the RSS is under `limit`.
    async stop(limit: number, waitS: number): Promise<RssTrace> {
      running = false;
      const atEnd = await read();
      peak = Math.max(peak, atEnd);
      let settled = atEnd;
      let underLimitAfterS: number | null = atEnd < limit ? 0 : null;
      for (let s = 1; underLimitAfterS === null && s <= waitS; s++) {
        await new Promise((resolve) => setTimeout(resolve, 1000));
        settled = await read();
        if (settled < limit) underLimitAfterS = s;
      }
      return { before, peak, atEnd, underLimitAfterS, settled };
    },
  };
}
