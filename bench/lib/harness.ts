// Pieces every benchmark needs: command-line options, order statistics, a table
// printer, the platform to bench (booted in this process, or a running deployment named
// by --url) and a JSON HTTP helper that names what failed.
import 'reflect-metadata';
import type { INestApplication, INestApplicationContext } from '@nestjs/common';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { request as httpRequest, type Agent } from 'node:http';
import type { AddressInfo } from 'node:net';
import { parseArgs, promisify, type ParseArgsConfig } from 'node:util';
import { runMigrations } from '../../migrations/index.js';

export class BenchError extends Error {}

// ---------------------------------------------------------------------------------------
// Options

type ArgOptions = NonNullable<ParseArgsConfig['options']>;

// parseArgs, strict, with -h/--help: prints `usage` and exits on --help; an unknown or
// malformed option is a BenchError that ends with the usage.
export function readArgs<const O extends ArgOptions>(options: O, usage: string) {
  let parsed: ReturnType<typeof parseArgs<{ options: O & { help: { type: 'boolean'; short: 'h' } }; strict: true; allowPositionals: false }>>;
  try {
    parsed = parseArgs({ options: { ...options, help: { type: 'boolean', short: 'h' } as const }, strict: true, allowPositionals: false });
  } catch (error) {
    throw new BenchError(`${(error as Error).message}\n\n${usage}`);
  }
  if ((parsed.values as { help?: boolean }).help) {
    console.log(usage);
    process.exit(0);
  }
  return parsed.values;
}

// A whole-number option: `raw` (the flag, else its environment variable) or `def`.
export function wholeNumber(name: string, raw: string | undefined, def: number, min: number): number {
  if (raw === undefined || raw === '') return def;
  const value = Number(raw);
  if (!Number.isInteger(value) || value < min) throw new BenchError(`${name} must be a whole number >= ${min} (got "${raw}")`);
  return value;
}

// ---------------------------------------------------------------------------------------
// Statistics and tables

export interface Summary {
  n: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  // Sample standard deviation (n - 1); 0 for one sample.
  stdev: number;
}

// Nearest-rank percentile of an ascending array.
export function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

export function summarize(samples: number[]): Summary {
  const sorted = [...samples].sort((a, b) => a - b);
  const n = sorted.length;
  const mean = sorted.reduce((s, x) => s + x, 0) / n;
  const variance = n > 1 ? sorted.reduce((s, x) => s + (x - mean) ** 2, 0) / (n - 1) : 0;
  return {
    n,
    min: sorted[0]!,
    p50: percentile(sorted, 50),
    p90: percentile(sorted, 90),
    p99: percentile(sorted, 99),
    max: sorted[n - 1]!,
    mean,
    stdev: Math.sqrt(variance),
  };
}

export const fixed = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : '-');

export function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) => cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

// The columns of a full summary, and one row of them.
export const SUMMARY_HEADERS = ['(ms)', 'n', 'min', 'p50', 'p90', 'p99', 'max', 'mean', 'stdev'];
export function summaryRow(label: string, s: Summary, digits = 2): string[] {
  return [label, String(s.n), ...[s.min, s.p50, s.p90, s.p99, s.max, s.mean, s.stdev].map((x) => fixed(x, digits))];
}

// ---------------------------------------------------------------------------------------
// The platform: booted in this process, or a running deployment

export interface InProcessPlatform {
  url: string;
  adminKey: string;
  workerId: string;
  gateway: INestApplication;
  close(): Promise<void>;
}

// Boots a worker and a gateway here, against DATABASE_URL/REDIS_URL (defaults: the
// local dev services). `env` is applied first: the app modules read the environment
// when they are imported.
export async function startInProcess(
  env: Record<string, string> = {},
  gatewayOptions: Record<string, unknown> = {},
): Promise<InProcessPlatform> {
  const e = process.env;
  e.DATABASE_URL ??= 'postgres://drydock:drydock@127.0.0.1:5432/drydock';
  e.REDIS_URL ??= 'redis://127.0.0.1:6379/0';
  e.DRYDOCK_ADMIN_KEY ??= 'dev-admin-key-0123456789abcdef';
  // The gateway refuses to start without it.
  e.ARTIFACTS_SIGNING_SECRET ??= 'bench-signing-secret-0123456789abcdef0123';
  e.SANDBOX_IMAGE ??= 'drydock/sandbox:latest';
  // The apps' JSON request logs would drown the figures.
  e.LOG_LEVEL ??= 'silent';
  const workerId = `bench-${randomBytes(4).toString('hex')}`;
  Object.assign(e, env, { WORKER_ID: workerId, GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1' });
  const [{ createWorker }, { createGateway }] = await Promise.all([
    import('../../apps/worker/src/bootstrap.js'),
    import('../../apps/gateway/src/bootstrap.js'),
  ]);
  await runMigrations(e.DATABASE_URL).catch((error: Error) => {
    throw new BenchError(`migrating ${e.DATABASE_URL} failed (is PostgreSQL up?): ${error.message}`);
  });
  const worker: INestApplicationContext = await createWorker({ logger: false });
  let gateway: INestApplication;
  try {
    gateway = await createGateway({ logger: false, ...gatewayOptions });
    await gateway.listen(0, '127.0.0.1');
  } catch (error) {
    await worker.close();
    throw error;
  }
  const { port } = gateway.getHttpServer().address() as AddressInfo;
  return {
    url: `http://127.0.0.1:${port}`,
    adminKey: e.DRYDOCK_ADMIN_KEY,
    workerId,
    gateway,
    async close() {
      await gateway.close();
      await worker.close();
    },
  };
}

// What a bench runs against. `local` is the apps booted in this process (for in-process
// only measurements: wrapped methods, the apps' own clients), null with --url.
export interface BenchTarget {
  url: string;
  adminKey: string;
  // For the report: "in-process gateway + worker bench-…" or "running deployment at …".
  mode: string;
  local: InProcessPlatform | null;
  close(): Promise<void>;
}

// The --url / --admin-key options every bench takes (spread them into readArgs/parseArgs).
export const TARGET_ARGS = { url: { type: 'string' }, 'admin-key': { type: 'string' } } as const;

// The running deployment at `url` when one is given (admin key: `adminKey`, else
// BENCH_ADMIN_KEY, else DRYDOCK_ADMIN_KEY, else the dev key), or a gateway and a worker
// booted here with startInProcess(env, gatewayOptions).
export async function openTarget(
  target: { url?: string | null; adminKey?: string | null },
  env: Record<string, string> = {},
  gatewayOptions: Record<string, unknown> = {},
): Promise<BenchTarget> {
  const url = target.url?.replace(/\/+$/, '');
  if (url) {
    const e = process.env;
    return {
      url,
      adminKey: target.adminKey || e.BENCH_ADMIN_KEY || e.DRYDOCK_ADMIN_KEY || 'dev-admin-key-0123456789abcdef',
      mode: `running deployment at ${url}`,
      local: null,
      close: async () => undefined,
    };
  }
  const local = await startInProcess(env, gatewayOptions);
  return { url: local.url, adminKey: local.adminKey, mode: `in-process gateway + worker ${local.workerId}`, local, close: () => local.close() };
}

// A new tenant (POST /admin/tenants), or a BenchError saying what the gateway answered.
export async function createTenant(target: { url: string; adminKey: string }, body: Record<string, unknown>): Promise<{ id: string; apiKey: string }> {
  const res = await api(target.url, target.adminKey, 'POST', '/admin/tenants', body);
  if (res.status !== 201 || typeof res.body?.apiKey !== 'string' || typeof res.body?.id !== 'string') {
    throw new BenchError(`POST /admin/tenants answered ${res.status}: ${JSON.stringify(res.body)} (is the admin key right?)`);
  }
  return { id: res.body.id as string, apiKey: res.body.apiKey as string };
}

// Deletes a tenant a bench created (DELETE /admin/tenants/:id ends its sessions and
// removes what it owns). For `finally` blocks: it never throws; a failure is printed as
// a "cleanup:" line and the answer is false.
export async function deleteTenant(target: { url: string; adminKey: string }, id: string): Promise<boolean> {
  const res = await api(target.url, target.adminKey, 'DELETE', `/admin/tenants/${id}`).catch((error: Error) => ({ status: 0, body: error.message }));
  if (res.status === 200) return true;
  console.error(`cleanup: DELETE /admin/tenants/${id} answered ${res.status}: ${JSON.stringify(res.body)}`);
  return false;
}

// A new session (POST /v1/sessions with `body`), or a BenchError saying what the gateway
// answered. `view` is the whole answer (workerId, storage, ...).
export async function createSession(url: string, key: string, body: Record<string, unknown> = {}): Promise<{ id: string; view: any }> {
  const res = await api(url, key, 'POST', '/v1/sessions', body);
  if ((res.status !== 201 && res.status !== 200) || typeof res.body?.id !== 'string') {
    throw new BenchError(`POST /v1/sessions answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
  return { id: res.body.id as string, view: res.body };
}

// Ends a session a bench created (DELETE /v1/sessions/:id). For `finally` blocks: it
// never throws; what the gateway answered (status 0 when it could not be reached) is
// for the caller to report.
export async function endSession(url: string, key: string, id: string): Promise<{ status: number; body: unknown }> {
  return api(url, key, 'DELETE', `/v1/sessions/${id}`).catch((error: Error) => ({ status: 0, body: error.message }));
}

// Runs a bench's main: exit code 1 and "<name> aborted: <why>" when it throws (the
// message alone for a BenchError, the stack otherwise).
export function runMain(name: string, main: () => Promise<unknown>): void {
  main().then(
    () => undefined,
    (error: unknown) => {
      console.error(`\n${name} aborted: ${error instanceof BenchError ? error.message : ((error as Error)?.stack ?? error)}`);
      process.exitCode = 1;
    },
  );
}

// ---------------------------------------------------------------------------------------
// HTTP

// fetch() that says which URL it could not reach and why (undici hides it in `cause`).
export async function request(url: string, init: RequestInit = {}): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    throw new BenchError(`${init.method ?? 'GET'} ${url} failed: ${cause ?? (error as Error).message}`);
  }
}

// Posts `print(1)` to a session over node:http on `agent` (keep-alive, cheaper for the
// client than fetch under load); resolves when the answer is 200 with stdout "1\n".
const PRINT_ONE = JSON.stringify({ code: 'print(1)' });
export function postPrintOne(agent: Agent, base: URL, key: string, sessionId: string, what = 'an execution'): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const req = httpRequest(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method: 'POST',
        path: `/v1/sessions/${sessionId}/executions`,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(PRINT_ONE) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => {
          if (res.statusCode === 200 && text.includes('"stdout":"1\\n"')) resolve();
          else reject(new BenchError(`${what} answered ${res.statusCode}: ${text.slice(0, 300)}`));
        });
      },
    );
    req.on('error', reject);
    req.end(PRINT_ONE);
  });
}

// A JSON request that throws a BenchError naming the URL when it cannot be made. `text`
// is the body as received (for error messages); `receivedAt` (performance.now()) is when
// its last byte arrived, before the client decoded and parsed it: latencies end there, as
// exec-latency's do (a runs/wait answer holds the thread's whole state, 300 KB at 800
// messages, and decoding and parsing it took the client 1.5-3.5 ms).
export async function api(
  base: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any; text: string; receivedAt: number }> {
  const res = await request(base + path, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const bytes = Buffer.from(await res.arrayBuffer());
  const receivedAt = performance.now();
  const text = bytes.toString('utf8');
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: keep the text for the error message */
  }
  return { status: res.status, body: parsed, text, receivedAt };
}

// ---------------------------------------------------------------------------------------
// In-process timing

// Wraps `proto[method]` so that the time of every call is passed to `record`, with what
// the call resolved to (undefined when it threw) and when it started (performance.now()).
export function timeMethod(
  proto: object,
  method: string,
  record: (ms: number, result: unknown, startedAt: number) => void,
): void {
  const target = proto as Record<string, unknown>;
  const original = target[method];
  if (typeof original !== 'function') throw new BenchError(`${method} is gone: the bench needs updating`);
  target[method] = async function (this: unknown, ...args: unknown[]) {
    const started = performance.now();
    let result: unknown;
    try {
      result = await (original as (...a: unknown[]) => unknown).apply(this, args);
      return result;
    } finally {
      record(performance.now() - started, result, started);
    }
  };
}

// The Docker id of a live session's container, from GET /admin/sessions (a sandbox taken
// from the warm pool keeps the labels it was started with, so labels do not name its
// session).
export async function containerOfSession(base: string, adminKey: string, sessionId: string): Promise<string> {
  const res = await api(base, adminKey, 'GET', '/admin/sessions');
  const session = (res.body?.sessions as { id: string; containerId: string | null }[] | undefined)?.find((s) => s.id === sessionId);
  if (!session?.containerId) throw new BenchError(`GET /admin/sessions names no container for ${sessionId} (${res.status})`);
  return session.containerId;
}


// ---------------------------------------------------------------------------------------
// Docker (the CLI, for baselines and in-container timing)

const execFileAsync = promisify(execFile);

// The local Docker server's version; a BenchError saying `why` the CLI is needed if it fails.
export async function dockerVersion(why: string): Promise<string> {
  try {
    return (await execFileAsync('docker', ['version', '--format', '{{.Server.Version}}'])).stdout.trim();
  } catch (error) {
    throw new BenchError(`the docker CLI is needed ${why} and failed: ${(error as Error).message.split('\n')[0]}`);
  }
}

// The image of a running container on this Docker host, or null when it is not here
// (a --url deployment whose worker runs on another host).
export async function localContainerImage(containerId: string): Promise<string | null> {
  try {
    const { stdout } = await execFileAsync('docker', ['inspect', '--format', '{{.State.Running}} {{.Config.Image}}', containerId]);
    const [running, image] = stdout.trim().split(' ');
    return running === 'true' ? (image ?? '') : null;
  } catch {
    return null;
  }
}
