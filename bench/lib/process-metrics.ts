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

// A process's CPU time (user + system, process_cpu_seconds_total) over a stretch of a
// bench, per unit of work: a steadier figure than wall time on a machine with busy
// spells, and the one that decides throughput when the cores are full.
export interface CpuMeter {
  what: string;
  // Milliseconds of CPU per unit since the meter started.
  perUnit(units: number): Promise<number>;
}

export async function startCpuMeter(url: string, key: string | null, what: string): Promise<CpuMeter> {
  const read = async () => {
    const seconds = metricValue(await scrapeMetrics(url, key, what), 'process_cpu_seconds_total');
    if (seconds === null) throw new BenchError(`${what}: ${url} has no process_cpu_seconds_total`);
    return seconds;
  };
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
