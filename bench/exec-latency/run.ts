// Exec-latency benchmark: the hot path of a trivial execution (`print(1)`) on a warm
// session, through the public REST API, compared in the same run with
// `docker exec <container> python3 -c 'print(1)'` on the very same container.
//
// A benchmark, not a test: it prints figures and only fails when a response is wrong.
// See bench/README.md for how to run it and how to read the output.
//
//   npm run build && npm run bench:exec-latency -- [options]
//
// By default it boots a gateway and a worker in this process (own WORKER_ID) against
// the PostgreSQL / Redis / Docker named by the environment; with --url it benches an
// already-running gateway instead.
import 'reflect-metadata';
import type { INestApplication, INestApplicationContext } from '@nestjs/common';
import Docker from 'dockerode';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import type { AddressInfo } from 'node:net';
import http from 'node:http';
import { cpus } from 'node:os';
import { parseArgs, promisify } from 'node:util';
import { Queue } from 'bullmq';
import { DataSource } from 'typeorm';
import { REDIS } from '@drydock/core';
import { DockerSandbox } from '@drydock/docker-sandbox';
import { TypeOrmExecutionsRepository } from '@drydock/execution';
import { SessionExecutionsService, SessionsService, TypeOrmSessionsRepository } from '@drydock/sessions';
import { TenantAuthGuard } from '../../apps/gateway/src/auth/tenant-auth.guard.js';
import { BullMqJobDispatcher } from '../../apps/gateway/src/queue/bullmq-job-dispatcher.js';
import { SessionJobsProcessor } from '../../apps/worker/src/processors/session-jobs.processor.js';
import { ExecutionRunner, RedisRunGuard, SessionFileSync } from '@drydock/session-host';
import { runMigrations } from '../../migrations/index.js';
import { containerOfSession } from '../lib/harness.js';

const execFileAsync = promisify(execFile);

const CODE = 'print(1)';
const EXPECTED_STDOUT = '1\n';
const TARGET_P50_MS = 10;
const TARGET_RATIO = 10;

const USAGE = `Usage: node dist/bench/exec-latency/run.js [options]

  --n <count>              timed Drydock executions            (BENCH_N, default 200)
  --docker-n <count>       timed docker exec runs              (BENCH_DOCKER_N, default 30)
  --warmup <count>         untimed Drydock warm-up runs        (BENCH_WARMUP, default 20)
  --docker-warmup <count>  untimed docker exec warm-up runs    (BENCH_DOCKER_WARMUP, default 3)
  --url <url>              bench a running gateway instead of booting one in-process (BENCH_URL)
  --admin-key <key>        admin key of that gateway           (BENCH_ADMIN_KEY, else DRYDOCK_ADMIN_KEY)
  --client <http|fetch>    HTTP client of the timed loop: node:http with a keep-alive
                           agent (default), or fetch (undici; ~0.8 ms more CPU per
                           request, spent in the same thread as the in-process platform)
  --no-breakdown           in-process mode: do not time the stages inside the process
  --json <file>            also write every sample and summary to a JSON file
  -h, --help

In-process mode reads DATABASE_URL, REDIS_URL, DRYDOCK_ADMIN_KEY and SANDBOX_IMAGE
(defaults: the local dev services, see bench/README.md). The container is found by its
drydock.session label on the local Docker daemon (DOCKER_SOCKET, default /var/run/docker.sock).`;

// ---------------------------------------------------------------------------------------
// Options

interface Options {
  n: number;
  dockerN: number;
  warmup: number;
  dockerWarmup: number;
  url: string | null;
  adminKey: string;
  breakdown: boolean;
  client: 'http' | 'fetch';
  json: string | null;
}

function parseOptions() {
  return parseArgs({
    options: {
      n: { type: 'string' },
      'docker-n': { type: 'string' },
      warmup: { type: 'string' },
      'docker-warmup': { type: 'string' },
      url: { type: 'string' },
      'admin-key': { type: 'string' },
      'no-breakdown': { type: 'boolean' },
      client: { type: 'string' },
      json: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
    strict: true,
    allowPositionals: false,
  });
}

function readOptions(): Options {
  let values: ReturnType<typeof parseOptions>['values'];
  try {
    ({ values } = parseOptions());
  } catch (error) {
    throw new BenchError(`${(error as Error).message}\n\n${USAGE}`);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const count = (name: string, raw: string | undefined, def: number, min: number): number => {
    if (raw === undefined || raw === '') return def;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min) throw new BenchError(`${name} must be an integer >= ${min} (got "${raw}")`);
    return value;
  };
  const env = process.env;
  return {
    n: count('--n / BENCH_N', values.n ?? env.BENCH_N, 200, 1),
    dockerN: count('--docker-n / BENCH_DOCKER_N', values['docker-n'] ?? env.BENCH_DOCKER_N, 30, 1),
    warmup: count('--warmup / BENCH_WARMUP', values.warmup ?? env.BENCH_WARMUP, 20, 0),
    dockerWarmup: count('--docker-warmup / BENCH_DOCKER_WARMUP', values['docker-warmup'] ?? env.BENCH_DOCKER_WARMUP, 3, 0),
    url: (values.url ?? env.BENCH_URL ?? '').replace(/\/+$/, '') || null,
    adminKey: values['admin-key'] ?? env.BENCH_ADMIN_KEY ?? env.DRYDOCK_ADMIN_KEY ?? 'dev-admin-key-0123456789abcdef',
    breakdown: !values['no-breakdown'],
    client: clientOption(values.client ?? env.BENCH_CLIENT),
    json: values.json ?? null,
  };
}

function clientOption(raw: string | undefined): 'http' | 'fetch' {
  if (raw === undefined || raw === '' || raw === 'http') return 'http';
  if (raw === 'fetch') return 'fetch';
  throw new BenchError(`--client / BENCH_CLIENT must be "http" or "fetch" (got "${raw}")`);
}

class BenchError extends Error {}

// ---------------------------------------------------------------------------------------
// Statistics

interface Summary {
  n: number;
  min: number;
  p50: number;
  p90: number;
  p99: number;
  max: number;
  mean: number;
  stdev: number;
}

// Nearest-rank percentile of an ascending array.
function percentile(sorted: number[], p: number): number {
  if (sorted.length === 0) return NaN;
  const rank = Math.ceil((p / 100) * sorted.length);
  return sorted[Math.min(sorted.length, Math.max(1, rank)) - 1]!;
}

function summarize(samples: number[]): Summary {
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

const ms = (x: number, digits = 2) => (Number.isFinite(x) ? x.toFixed(digits) : '-');

function table(headers: string[], rows: string[][]): string {
  const widths = headers.map((h, i) => Math.max(h.length, ...rows.map((r) => r[i]!.length)));
  const line = (cells: string[]) =>
    cells.map((c, i) => (i === 0 ? c.padEnd(widths[i]!) : c.padStart(widths[i]!))).join('  ');
  return [line(headers), widths.map((w) => '-'.repeat(w)).join('  '), ...rows.map(line)].join('\n');
}

function summaryRow(label: string, s: Summary): string[] {
  return [label, String(s.n), ms(s.min), ms(s.p50), ms(s.p90), ms(s.p99), ms(s.max), ms(s.mean), ms(s.stdev)];
}
const SUMMARY_HEADERS = ['(ms)', 'n', 'min', 'p50', 'p90', 'p99', 'max', 'mean', 'stdev'];

// ---------------------------------------------------------------------------------------
// In-process stage timing: wraps a few methods (prototype level, after boot) so each
// sample records how long each stage of the hot path took, plus start/end instants
// (performance.now(), one clock for gateway and worker since both live here) for the
// hand-offs between them. Costs about a microsecond per wrapped call.

type StageKey =
  | 'server' // HTTP 'request' event .. response 'finish'
  | 'auth'
  | 'service'
  | 'record'
  | 'ensurePlaced'
  | 'dispatch'
  | 'queueAdd'
  | 'processor'
  | 'workerJob'
  | 'claim'
  | 'push'
  | 'markRunning'
  | 'sandboxRun'
  | 'replMs'
  | 'complete';
type MarkKey = 'queueAddEnd' | 'processorStart' | 'workerJobEnd' | 'dispatchEnd';
type StageSample = Partial<Record<StageKey | MarkKey, number>>;

class StageRecorder {
  current: StageSample | null = null;
  readonly samples: StageSample[] = [];

  begin(): void {
    this.current = {};
  }

  end(): void {
    if (this.current) this.samples.push(this.current);
    this.current = null;
  }

  discard(): void {
    this.current = null;
  }

  add(key: StageKey, value: number): void {
    if (this.current) this.current[key] = (this.current[key] ?? 0) + value;
  }

  mark(key: MarkKey, at = performance.now()): void {
    if (this.current) this.current[key] = at;
  }

  wrap(
    proto: object,
    method: string,
    key: StageKey,
    extra: { onResult?: (result: unknown) => void; start?: MarkKey; end?: MarkKey } = {},
  ): void {
    const target = proto as Record<string, unknown>;
    const original = target[method];
    if (typeof original !== 'function') {
      // The code moved on: time the rest rather than give up the whole run.
      console.warn(`note: stage "${key}" is not timed (no method ${method} to wrap)`);
      return;
    }
    const recorder = this;
    target[method] = async function (this: unknown, ...args: unknown[]) {
      const started = performance.now();
      if (extra.start) recorder.mark(extra.start, started);
      try {
        const result = await (original as (...a: unknown[]) => unknown).apply(this, args);
        extra.onResult?.(result);
        return result;
      } finally {
        const ended = performance.now();
        recorder.add(key, ended - started);
        if (extra.end) recorder.mark(extra.end, ended);
      }
    };
  }
}

function instrument(recorder: StageRecorder, httpServer: Server): void {
  // Server-side time of the request, from Node's 'request' event to the last byte handed
  // to the socket: separates client/undici/socket costs from Express/Nest ones.
  httpServer.prependListener('request', (_req, res) => {
    const started = performance.now();
    res.once('finish', () => recorder.add('server', performance.now() - started));
  });
  recorder.wrap(TenantAuthGuard.prototype, 'canActivate', 'auth');
  recorder.wrap(SessionExecutionsService.prototype, 'execute', 'service');
  recorder.wrap(TypeOrmSessionsRepository.prototype, 'findWithNewExecution', 'record');
  recorder.wrap(SessionsService.prototype, 'ensurePlaced', 'ensurePlaced');
  recorder.wrap(BullMqJobDispatcher.prototype, 'dispatch', 'dispatch', { end: 'dispatchEnd' });
  recorder.wrap(Queue.prototype, 'add', 'queueAdd', { end: 'queueAddEnd' });
  recorder.wrap(SessionJobsProcessor.prototype, 'process', 'processor', { start: 'processorStart' });
  recorder.wrap(ExecutionRunner.prototype, 'execute', 'workerJob', { end: 'workerJobEnd' });
  recorder.wrap(RedisRunGuard.prototype, 'claim', 'claim');
  recorder.wrap(SessionFileSync.prototype, 'push', 'push');
  recorder.wrap(TypeOrmExecutionsRepository.prototype, 'markRunning', 'markRunning');
  // The supervisor's own float durationMs, before the repository rounds it.
  recorder.wrap(DockerSandbox.prototype, 'run', 'sandboxRun', {
    onResult: (outcome) => recorder.add('replMs', (outcome as { durationMs: number }).durationMs),
  });
  recorder.wrap(TypeOrmExecutionsRepository.prototype, 'complete', 'complete');
}

const diff = (a: number | undefined, b: number | undefined) => (a !== undefined && b !== undefined ? a - b : undefined);

// Rows of the breakdown: [label, value for one sample given its client-side total].
const BREAKDOWN: Array<[string, (s: StageSample, total: number) => number | undefined]> = [
  ['client round trip (request + body)', (_s, total) => total],
  ['  client side: HTTP client, loopback socket, body read', (s, total) => diff(total, s.server)],
  ['  server: HTTP request event .. response finish', (s) => s.server],
  ['    Express/Nest/ValidationPipe/JSON (the rest)', (s) => diff(diff(s.server, s.auth), s.service)],
  ['    TenantAuthGuard (cached key; SELECT on a miss)', (s) => s.auth],
  ['    SessionExecutionsService.execute', (s) => s.service],
  ['      session read + execution INSERT (one statement)', (s) => s.record],
  ['      ensurePlaced (worker liveness snapshot)', (s) => s.ensurePlaced],
  ['      dispatcher.dispatch (BullMQ add .. reply)', (s) => s.dispatch],
  ['        Queue.add (addJob script)', (s) => s.queueAdd],
  ['        hand-off: added .. processor called', (s) => diff(s.processorStart, s.queueAddEnd)],
  ['        worker processor (SessionJobsProcessor)', (s) => s.processor],
  ['          run-once claim (Redis SET NX)    } in parallel', (s) => s.claim],
  ['          file push (thread revision SELECT) }', (s) => s.push],
  ['          markRunning (UPDATE, runs > 50 ms only)', (s) => s.markRunning],
  ['          DockerSandbox.run (attach stream round trip)', (s) => s.sandboxRun],
  ['            REPL durationMs (supervisor, in container)', (s) => s.replMs],
  ['            transport (run - REPL durationMs)', (s) => diff(s.sandboxRun, s.replMs)],
  ['          complete (UPDATE ... RETURNING)', (s) => s.complete],
  ['        hand-back: worker done .. reply in gateway', (s) => diff(s.dispatchEnd, s.workerJobEnd)],
];

// ---------------------------------------------------------------------------------------
// The platform: in-process, or a running gateway.

interface Target {
  url: string;
  adminKey: string;
  mode: string;
  workerId: string | null;
  httpServer?: Server;
  primitives?: () => Promise<Array<[string, number[]]>>;
  close(): Promise<void>;
}

async function startInProcess(): Promise<Target> {
  const env = process.env;
  env.DATABASE_URL ??= 'postgres://drydock:drydock@127.0.0.1:5432/drydock';
  env.REDIS_URL ??= 'redis://127.0.0.1:6379/0';
  env.DRYDOCK_ADMIN_KEY ??= 'dev-admin-key-0123456789abcdef';
  // The gateway refuses to start without it; benches sign no links.
  env.ARTIFACTS_SIGNING_SECRET ??= 'bench-signing-secret-0123456789abcdef0123';
  env.SANDBOX_IMAGE ??= 'drydock/sandbox:latest';
  const workerId = `bench-${randomBytes(4).toString('hex')}`;
  Object.assign(env, { WORKER_ID: workerId, GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1' });
  // Loaded only here: the app modules register their TypeORM data source when imported,
  // which `--url` mode has no use for.
  const [{ createWorker }, { createGateway }] = await Promise.all([
    import('../../apps/worker/src/bootstrap.js'),
    import('../../apps/gateway/src/bootstrap.js'),
  ]);

  await runMigrations(env.DATABASE_URL).catch((error: Error) => {
    throw new BenchError(`migrating ${env.DATABASE_URL} failed (is PostgreSQL up?): ${error.message}`);
  });
  const worker: INestApplicationContext = await createWorker({ logger: false });
  let gateway: INestApplication;
  try {
    gateway = await createGateway({ logger: false });
    await gateway.listen(0, '127.0.0.1');
  } catch (error) {
    await worker.close();
    throw error;
  }
  const { port } = gateway.getHttpServer().address() as AddressInfo;

  return {
    url: `http://127.0.0.1:${port}`,
    adminKey: env.DRYDOCK_ADMIN_KEY,
    mode: `in-process gateway + worker ${workerId}`,
    workerId,
    httpServer: gateway.getHttpServer() as Server,
    // Cost of the primitives the hot path is made of, through the apps' own clients.
    async primitives() {
      const db = gateway.get(DataSource);
      const redis = gateway.get<symbol, { ping(): Promise<string> }>(REDIS);
      const time = async (fn: () => Promise<unknown>, n = 100) => {
        for (let i = 0; i < 10; i++) await fn();
        const out: number[] = [];
        for (let i = 0; i < n; i++) {
          const t0 = performance.now();
          await fn();
          out.push(performance.now() - t0);
        }
        return out;
      };
      return [
        ['PostgreSQL SELECT 1 (TypeORM pool)', await time(() => db.query('SELECT 1'))],
        ['Redis PING (ioredis)', await time(() => redis.ping())],
      ];
    },
    async close() {
      await gateway.close();
      await worker.close();
    },
  };
}

// ---------------------------------------------------------------------------------------
// HTTP

// fetch() that says which URL it could not reach and why (undici hides it in `cause`).
async function request(url: string, init: RequestInit): Promise<Response> {
  try {
    return await fetch(url, init);
  } catch (error) {
    const cause = (error as { cause?: { message?: string } }).cause?.message;
    throw new BenchError(`${init.method ?? 'GET'} ${url} failed: ${cause ?? (error as Error).message}`);
  }
}

// One POST over node:http with a keep-alive agent: the lightest client Node has, so the
// timed loop spends little of the shared thread's CPU on the client's side.
const keepAlive = new http.Agent({ keepAlive: true, maxSockets: 1 });
function httpPost(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  return new Promise((resolve, reject) => {
    const req = http.request(url, { method: 'POST', agent: keepAlive, headers: { ...headers, 'content-length': Buffer.byteLength(body) } }, (res) => {
      const chunks: Buffer[] = [];
      res.on('data', (chunk: Buffer) => chunks.push(chunk));
      res.on('end', () => resolve({ status: res.statusCode ?? 0, text: Buffer.concat(chunks).toString('utf8') }));
      res.on('error', reject);
    });
    req.on('error', (error) => reject(new BenchError(`POST ${url} failed: ${error.message}`)));
    req.end(body);
  });
}

async function fetchPost(url: string, headers: Record<string, string>, body: string): Promise<{ status: number; text: string }> {
  const res = await request(url, { method: 'POST', headers, body });
  return { status: res.status, text: await res.text() };
}

async function api(
  base: string,
  key: string,
  method: string,
  path: string,
  body?: unknown,
): Promise<{ status: number; body: any }> {
  const res = await request(base + path, {
    method,
    headers: {
      authorization: `Bearer ${key}`,
      accept: 'application/json',
      ...(body === undefined ? {} : { 'content-type': 'application/json' }),
    },
    body: body === undefined ? undefined : JSON.stringify(body),
  });
  const text = await res.text();
  let parsed: unknown = text;
  try {
    parsed = text ? JSON.parse(text) : null;
  } catch {
    /* not JSON: keep the text for the error message */
  }
  return { status: res.status, body: parsed };
}

// ---------------------------------------------------------------------------------------
// Main

interface DrydockSample {
  totalMs: number;
  replMs: number | null;
}

async function main(): Promise<number> {
  const options = readOptions();
  const docker = new Docker({ socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock' });

  const dockerCli = await execFileAsync('docker', ['version', '--format', '{{.Server.Version}}']).catch((error: Error) => {
    throw new BenchError(`the docker CLI is needed for the baseline and failed: ${error.message.split('\n')[0]}`);
  });

  const target: Target = options.url
    ? { url: options.url, adminKey: options.adminKey, mode: `gateway at ${options.url}`, workerId: null, close: async () => {} }
    : await startInProcess();

  const recorder = options.breakdown && target.httpServer ? new StageRecorder() : null;
  let tenantKey: string | null = null;
  let sessionId: string | null = null;
  let failed = false;
  try {
    // Tenant and warm session.
    const tenant = await api(target.url, target.adminKey, 'POST', '/admin/tenants', {
      name: `bench-${randomBytes(3).toString('hex')}`,
    });
    if (tenant.status !== 201 || typeof tenant.body?.apiKey !== 'string') {
      throw new BenchError(`POST /admin/tenants answered ${tenant.status}: ${JSON.stringify(tenant.body)} (is the admin key right?)`);
    }
    tenantKey = tenant.body.apiKey as string;
    const session = await api(target.url, tenantKey, 'POST', '/v1/sessions', {});
    if ((session.status !== 201 && session.status !== 200) || typeof session.body?.id !== 'string') {
      throw new BenchError(`POST /v1/sessions answered ${session.status}: ${JSON.stringify(session.body)}`);
    }
    sessionId = session.body.id as string;
    const placedOn = session.body.workerId as string | undefined;
    if (target.workerId && placedOn && placedOn !== target.workerId) {
      console.warn(`warning: the session was placed on worker ${placedOn}, not on this process's ${target.workerId}`);
    }

    const containerId = await containerOfSession(target.url, target.adminKey, sessionId);
    const [info] = await docker.listContainers({ filters: { id: [containerId] } });
    if (!info) {
      throw new BenchError(
        `container ${containerId} of ${sessionId} is not running on this Docker host ` +
          `(the worker of this gateway must run on the same host for the docker exec baseline)`,
      );
    }

    console.log('Drydock exec-latency benchmark');
    console.log(`  target     ${target.mode}`);
    console.log(`  session    ${sessionId} on worker ${placedOn ?? '?'}`);
    console.log(`  container  ${containerId.slice(0, 12)} (${info.Image})`);
    console.log(`  code       ${CODE}  -> expects stdout ${JSON.stringify(EXPECTED_STDOUT)}`);
    console.log(
      `  runs       drydock ${options.warmup} warm-up + ${options.n} timed; ` +
        `docker exec ${options.dockerWarmup} warm-up + ${options.dockerN} timed (sequential)`,
    );
    console.log(`  host       node ${process.version}, ${cpus().length} CPUs, docker ${dockerCli.stdout.trim()}`);
    console.log('');

    // --- Drydock: POST /v1/sessions/:id/executions
    if (recorder) instrument(recorder, target.httpServer!);
    const execPath = `/v1/sessions/${sessionId}/executions`;
    const execBody = JSON.stringify({ code: CODE });
    const headers = { authorization: `Bearer ${tenantKey}`, 'content-type': 'application/json', accept: 'application/json' };
    const drydock: DrydockSample[] = [];
    let cpuAtStart: NodeJS.CpuUsage | undefined;
    for (let i = 0; i < options.warmup + options.n; i++) {
      const timed = i >= options.warmup;
      if (i === options.warmup) cpuAtStart = process.cpuUsage();
      if (timed) recorder?.begin();
      const t0 = performance.now();
      const res = options.client === 'http' ? await httpPost(target.url + execPath, headers, execBody) : await fetchPost(target.url + execPath, headers, execBody);
      const text = res.text;
      const totalMs = performance.now() - t0;
      let view: any;
      try {
        view = JSON.parse(text);
      } catch {
        view = text;
      }
      if (res.status !== 200 || view?.status !== 'ok' || view?.stdout !== EXPECTED_STDOUT) {
        recorder?.discard();
        throw new BenchError(
          `drydock run ${i + 1} is wrong: HTTP ${res.status}, status ${JSON.stringify(view?.status)}, ` +
            `stdout ${JSON.stringify(view?.stdout)} (expected "ok" and ${JSON.stringify(EXPECTED_STDOUT)}); body: ${text.slice(0, 500)}`,
        );
      }
      if (timed) {
        recorder?.end();
        drydock.push({ totalMs, replMs: typeof view.durationMs === 'number' ? view.durationMs : null });
      }
    }

    // CPU this Node process spent per timed request: client only with --url; client,
    // gateway and worker together in-process.
    const cpu = process.cpuUsage(cpuAtStart);
    const cpuPerRequestMs = (cpu.user + cpu.system) / 1000 / options.n;

    // --- Baseline: docker exec on the same container.
    const dockerRuns: number[] = [];
    for (let i = 0; i < options.dockerWarmup + options.dockerN; i++) {
      const t0 = performance.now();
      let stdout: string;
      try {
        ({ stdout } = await execFileAsync('docker', ['exec', '-u', '10001:10001', containerId, 'python3', '-c', CODE], { encoding: 'utf8' }));
      } catch (error) {
        throw new BenchError(`docker exec run ${i + 1} failed: ${(error as Error).message.trim()}`);
      }
      const elapsed = performance.now() - t0;
      if (stdout !== EXPECTED_STDOUT) {
        throw new BenchError(`docker exec run ${i + 1} printed ${JSON.stringify(stdout)}, expected ${JSON.stringify(EXPECTED_STDOUT)}`);
      }
      if (i >= options.dockerWarmup) dockerRuns.push(elapsed);
    }

    // --- Report
    const total = summarize(drydock.map((s) => s.totalMs));
    const baseline = summarize(dockerRuns);
    const repl = drydock.every((s) => s.replMs !== null) ? summarize(drydock.map((s) => s.replMs!)) : null;
    const overhead = repl ? summarize(drydock.map((s) => s.totalMs - s.replMs!)) : null;

    console.log(`Client-side wall time per request (performance.now() around the request and its body; client: ${options.client === 'http' ? 'node:http keep-alive' : 'fetch'}):`);
    const rows = [summaryRow('drydock POST /executions', total)];
    if (repl) rows.push(summaryRow('  REPL durationMs (API, whole ms)', repl));
    if (overhead) rows.push(summaryRow('  overhead = total - REPL', overhead));
    rows.push(summaryRow('docker exec python3 -c', baseline));
    console.log(table(SUMMARY_HEADERS, rows));
    console.log(
      `Node CPU per Drydock request: ${ms(cpuPerRequestMs)} ms ` +
        `(${target.httpServer ? 'client + gateway + worker, one thread' : 'the client only'}; ` +
        `${((cpuPerRequestMs / total.mean) * 100).toFixed(0)}% of the mean wall time)`,
    );
    console.log('');

    let breakdownJson: Record<string, Summary> | undefined;
    if (recorder && recorder.samples.length === drydock.length) {
      console.log('Where the time goes (in-process stage timing, per request; nested rows are part of their parent):');
      breakdownJson = {};
      const bRows: string[][] = [];
      for (const [label, pick] of BREAKDOWN) {
        const values = recorder.samples
          .map((s, i) => pick(s, drydock[i]!.totalMs))
          .filter((v): v is number => v !== undefined);
        if (values.length === 0) continue;
        const s = summarize(values);
        breakdownJson[label.trim()] = s;
        bRows.push([label, ms(s.p50, 3), ms(s.mean, 3), ms(s.p99, 3), `${((s.mean / total.mean) * 100).toFixed(1)}%`]);
      }
      console.log(table(['stage (ms)', 'p50', 'mean', 'p99', '% of mean'], bRows));
      console.log('');
    }

    let primitivesJson: Record<string, Summary> | undefined;
    if (recorder && target.primitives) {
      primitivesJson = {};
      const pRows: string[][] = [];
      for (const [label, values] of await target.primitives()) {
        const s = summarize(values);
        primitivesJson[label] = s;
        pRows.push([label, ms(s.p50, 3), ms(s.mean, 3), ms(s.p99, 3)]);
      }
      console.log('Round trip of the primitives on the path (for scale):');
      console.log(table(['primitive (ms)', 'p50', 'mean', 'p99'], pRows));
      console.log('');
    }

    const ratio = baseline.p50 / total.p50;
    const p50Ok = total.p50 < TARGET_P50_MS;
    const ratioOk = ratio >= TARGET_RATIO;
    console.log(`targets: drydock p50 < ${TARGET_P50_MS} ms: ${p50Ok ? 'MET' : 'MISSED'} (${ms(total.p50)} ms); ` +
      `docker exec p50 / drydock p50 >= ${TARGET_RATIO}x: ${ratioOk ? 'MET' : 'MISSED'} (${ratio.toFixed(1)}x)`);
    console.log(`drydock p50 ${ms(total.p50)} ms | docker exec p50 ${ms(baseline.p50)} ms | ratio ${ratio.toFixed(1)}x`);

    if (options.json) {
      await writeFile(
        options.json,
        JSON.stringify(
          {
            at: new Date().toISOString(),
            target: target.mode,
            options: { ...options, adminKey: undefined },
            node: process.version,
            cpus: cpus().length,
            drydock: { summary: total, repl, overhead, cpuPerRequestMs, samples: drydock },
            dockerExec: { summary: baseline, samples: dockerRuns },
            breakdown: breakdownJson,
            breakdownSamples: recorder?.samples,
            primitives: primitivesJson,
            ratio,
            targets: { p50Ms: TARGET_P50_MS, ratio: TARGET_RATIO, p50Met: p50Ok, ratioMet: ratioOk },
          },
          null,
          2,
        ),
      );
      console.log(`samples written to ${options.json}`);
    }
  } catch (error) {
    failed = true;
    throw error;
  } finally {
    // Clean up even after a failure; a cleanup error must not hide the original one.
    if (sessionId && tenantKey) {
      const res = await api(target.url, tenantKey, 'DELETE', `/v1/sessions/${sessionId}`).catch((e: Error) => ({ status: 0, body: e.message }));
      if (res.status !== 204 && !failed) console.warn(`warning: DELETE session answered ${res.status}: ${JSON.stringify(res.body)}`);
    }
    await target.close().catch((e: Error) => console.warn(`warning: closing the apps failed: ${e.message}`));
  }
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`\nexec-latency benchmark aborted: ${error instanceof BenchError ? error.message : (error as Error)?.stack ?? error}`);
    process.exitCode = 1;
  },
);
