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
import type { INestApplication } from '@nestjs/common';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import type { Server } from 'node:http';
import http from 'node:http';
import { cpus } from 'node:os';
import { promisify } from 'node:util';
import { DataSource } from 'typeorm';
import { REDIS } from '@drydock/core';
import { DockerSandbox } from '@drydock/docker-sandbox';
import { TypeOrmExecutionsRepository } from '@drydock/execution';
import { SessionExecutionsService, SessionsService, TypeOrmSessionsRepository } from '@drydock/sessions';
import { TenantAuthGuard } from '../../apps/gateway/src/auth/tenant-auth.guard.js';
import { RedisJobDispatcher } from '../../apps/gateway/src/queue/redis-job-dispatcher.js';
import { SessionJobsProcessor } from '../../apps/worker/src/processors/session-jobs.processor.js';
import { ExecutionRunner, RedisRunGuard, SessionFileSync } from '@drydock/session-host';
import {
  api,
  BenchError,
  containerOfSession,
  createSession,
  createTenant,
  dockerVersion,
  endSession,
  fixed,
  localContainerImage,
  openTarget,
  readArgs,
  runMain,
  request,
  summarize,
  summaryRow,
  SUMMARY_HEADERS,
  table,
  TARGET_ARGS,
  timeMethod,
  wholeNumber,
  type Summary,
} from '../lib/harness.js';
import { machineProbeLine } from '../lib/machine-probe.js';

const execFileAsync = promisify(execFile);

const CODE = 'print(1)';
const EXPECTED_STDOUT = '1\n';
// Issue 17's targets (issue 8's were 10 ms and 10x).
const TARGET_P50_MS = 6;
const TARGET_RATIO = 20;
// Warm-up runs by default. A gateway and a worker just started take 0.3–1 ms longer per
// execution for their first ~2,000 (V8 optimizing their hot paths as they run; measured
// in blocks of 250, bench/README.md): the targets are about a running platform, so the
// timed runs come after them, and the warm-up's first and last runs are reported too.
const DEFAULT_WARMUP = 2000;
// How many of the warm-up's first and last runs its report line summarizes.
const WARMUP_EDGE = 200;

const USAGE = `Usage: node dist/bench/exec-latency/run.js [options]

  --n <count>              timed Drydock executions            (BENCH_N, default 200)
  --docker-n <count>       timed docker exec runs              (BENCH_DOCKER_N, default 30)
  --warmup <count>         untimed Drydock warm-up runs        (BENCH_WARMUP, default 2000: a
                           gateway and worker just started are slower until V8 has
                           optimized their hot paths; the first and last 200 are reported)
  --docker-warmup <count>  untimed docker exec warm-up runs    (BENCH_DOCKER_WARMUP, default 3)
  --busy-sessions <count>  other sessions of the tenant that run a CPU-bound loop the
                           whole time (BENCH_BUSY_SESSIONS, default 0): the hot path's
                           latency while user code keeps the cores busy
  --url <url>              bench a running gateway instead of booting one in-process (BENCH_URL)
  --admin-key <key>        admin key of that gateway           (BENCH_ADMIN_KEY, else DRYDOCK_ADMIN_KEY)
  --client <http|fetch>    HTTP client of the timed loop: node:http with a keep-alive
                           agent (default), or fetch (undici; ~0.8 ms more CPU per
                           request, spent in the same thread as the in-process platform)
  --no-breakdown           in-process mode: do not time the stages inside the process
  --json <file>            also write every sample and summary to a JSON file
  -h, --help

In-process mode reads DATABASE_URL, REDIS_URL, DRYDOCK_ADMIN_KEY and SANDBOX_IMAGE
(defaults: the local dev services, see bench/README.md). The session's container (named
by GET /admin/sessions) must run on the local Docker host, for the docker exec baseline.`;

// ---------------------------------------------------------------------------------------
// Options

interface Options {
  n: number;
  dockerN: number;
  warmup: number;
  dockerWarmup: number;
  busySessions: number;
  url: string | null;
  adminKey: string;
  breakdown: boolean;
  client: 'http' | 'fetch';
  json: string | null;
}

function readOptions(): Options {
  const values = readArgs(
    {
      n: { type: 'string' },
      'docker-n': { type: 'string' },
      warmup: { type: 'string' },
      'docker-warmup': { type: 'string' },
      'busy-sessions': { type: 'string' },
      ...TARGET_ARGS,
      'no-breakdown': { type: 'boolean' },
      client: { type: 'string' },
      json: { type: 'string' },
    },
    USAGE,
  );
  const env = process.env;
  return {
    n: wholeNumber('--n / BENCH_N', values.n ?? env.BENCH_N, 200, 1),
    dockerN: wholeNumber('--docker-n / BENCH_DOCKER_N', values['docker-n'] ?? env.BENCH_DOCKER_N, 30, 1),
    warmup: wholeNumber('--warmup / BENCH_WARMUP', values.warmup ?? env.BENCH_WARMUP, DEFAULT_WARMUP, 0),
    dockerWarmup: wholeNumber('--docker-warmup / BENCH_DOCKER_WARMUP', values['docker-warmup'] ?? env.BENCH_DOCKER_WARMUP, 3, 0),
    busySessions: wholeNumber('--busy-sessions / BENCH_BUSY_SESSIONS', values['busy-sessions'] ?? env.BENCH_BUSY_SESSIONS, 0, 0),
    url: (values.url ?? env.BENCH_URL ?? '').replace(/\/+$/, '') || null,
    adminKey: values['admin-key'] ?? '',
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
  | 'processor'
  | 'workerJob'
  | 'claim'
  | 'push'
  | 'markRunning'
  | 'sandboxRun'
  | 'replMs'
  | 'complete';
type MarkKey = 'dispatchStart' | 'processorStart' | 'workerJobEnd' | 'dispatchEnd';
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
    if (typeof (proto as Record<string, unknown>)[method] !== 'function') {
      // The code moved on: time the rest rather than give up the whole run.
      console.warn(`note: stage "${key}" is not timed (no method ${method} to wrap)`);
      return;
    }
    timeMethod(proto, method, (elapsed, result, startedAt) => {
      if (extra.start) this.mark(extra.start, startedAt);
      if (result !== undefined) extra.onResult?.(result);
      this.add(key, elapsed);
      if (extra.end) this.mark(extra.end, startedAt + elapsed);
    });
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
  recorder.wrap(RedisJobDispatcher.prototype, 'dispatch', 'dispatch', { start: 'dispatchStart', end: 'dispatchEnd' });
  recorder.wrap(SessionJobsProcessor.prototype, 'processExecution', 'processor', { start: 'processorStart' });
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
  ['      dispatcher.dispatch (lane LPUSH .. reply)', (s) => s.dispatch],
  ['        hand-off: dispatch called .. processor called (LPUSH, BLMOVE)', (s) => diff(s.processorStart, s.dispatchStart)],
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
// In-process only: the primitives the hot path is made of.

// Their round trips, through the in-process apps' own clients.
async function primitives(gateway: INestApplication): Promise<Array<[string, number[]]>> {
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
}

// ---------------------------------------------------------------------------------------
// HTTP

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

// ---------------------------------------------------------------------------------------
// Main

interface DrydockSample {
  totalMs: number;
  replMs: number | null;
}

// The warm-up's first and last WARMUP_EDGE runs (fewer when the warm-up is short; none
// without one): how much slower the platform was when the bench began than when it timed.
function warmupEdges(samples: number[]): { first: Summary; last: Summary } | null {
  if (samples.length === 0) return null;
  const edge = Math.min(WARMUP_EDGE, Math.ceil(samples.length / 2));
  return { first: summarize(samples.slice(0, edge)), last: summarize(samples.slice(-edge)) };
}

async function main(): Promise<void> {
  const options = readOptions();
  const dockerCli = await dockerVersion('for the baseline');
  const target = await openTarget(options);
  const gateway = target.local?.gateway;
  const httpServer = gateway?.getHttpServer() as Server | undefined;

  const recorder = options.breakdown && httpServer ? new StageRecorder() : null;
  let tenantKey: string | null = null;
  let sessionId: string | null = null;
  const busy: BusySession[] = [];
  let failed = false;
  try {
    // Tenant and warm session.
    tenantKey = (await createTenant(target, { name: `bench-${randomBytes(3).toString('hex')}` })).apiKey;
    const session = await createSession(target.url, tenantKey);
    sessionId = session.id;
    const placedOn = session.view.workerId as string | undefined;
    if (target.local && placedOn && placedOn !== target.local.workerId) {
      console.warn(`warning: the session was placed on worker ${placedOn}, not on this process's ${target.local.workerId}`);
    }

    const containerId = await containerOfSession(target.url, target.adminKey, sessionId);
    const image = await localContainerImage(containerId);
    if (image === null) {
      throw new BenchError(
        `container ${containerId} of ${sessionId} is not running on this Docker host ` +
          `(the worker of this gateway must run on the same host for the docker exec baseline)`,
      );
    }

    console.log('Drydock exec-latency benchmark');
    console.log(`  target     ${target.mode}`);
    console.log(`  session    ${sessionId} on worker ${placedOn ?? '?'}`);
    console.log(`  container  ${containerId.slice(0, 12)} (${image})`);
    console.log(`  code       ${CODE}  -> expects stdout ${JSON.stringify(EXPECTED_STDOUT)}`);
    console.log(
      `  runs       drydock ${options.warmup} warm-up + ${options.n} timed; ` +
        `docker exec ${options.dockerWarmup} warm-up + ${options.dockerN} timed (sequential)`,
    );
    console.log(`  host       node ${process.version}, ${cpus().length} CPUs, docker ${dockerCli}`);
    if (options.busySessions) console.log(`  busy       ${options.busySessions} other session(s) running \`${BUSY_CODE}\` throughout`);
    console.log('');
    await startBusySessions(target.url, tenantKey, options.busySessions, busy);

    // --- Drydock: POST /v1/sessions/:id/executions
    if (recorder) instrument(recorder, httpServer!);
    const execPath = `/v1/sessions/${sessionId}/executions`;
    const execBody = JSON.stringify({ code: CODE });
    const headers = { authorization: `Bearer ${tenantKey}`, 'content-type': 'application/json', accept: 'application/json' };
    const drydock: DrydockSample[] = [];
    const warmupMs: number[] = [];
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
      } else {
        warmupMs.push(totalMs);
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
    const warmup = warmupEdges(warmupMs);
    if (warmup) {
      console.log(
        `warm-up (${warmupMs.length} runs, not in the table): p50 of the first ${warmup.first.n} ${fixed(warmup.first.p50)} ms, ` +
          `of the last ${warmup.last.n} ${fixed(warmup.last.p50)} ms`,
      );
    }
    console.log(
      `Node CPU per Drydock request: ${fixed(cpuPerRequestMs)} ms ` +
        `(${httpServer ? 'client + gateway + worker, one thread' : 'the client only'}; ` +
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
        bRows.push([label, fixed(s.p50, 3), fixed(s.mean, 3), fixed(s.p99, 3), `${((s.mean / total.mean) * 100).toFixed(1)}%`]);
      }
      console.log(table(['stage (ms)', 'p50', 'mean', 'p99', '% of mean'], bRows));
      console.log('');
    }

    let primitivesJson: Record<string, Summary> | undefined;
    if (recorder && gateway) {
      primitivesJson = {};
      const pRows: string[][] = [];
      for (const [label, values] of await primitives(gateway)) {
        const s = summarize(values);
        primitivesJson[label] = s;
        pRows.push([label, fixed(s.p50, 3), fixed(s.mean, 3), fixed(s.p99, 3)]);
      }
      console.log('Round trip of the primitives on the path (for scale):');
      console.log(table(['primitive (ms)', 'p50', 'mean', 'p99'], pRows));
      console.log('');
    }

    console.log(machineProbeLine());
    const ratio = baseline.p50 / total.p50;
    const p50Ok = total.p50 < TARGET_P50_MS;
    const ratioOk = ratio >= TARGET_RATIO;
    console.log(`targets: drydock p50 < ${TARGET_P50_MS} ms: ${p50Ok ? 'MET' : 'MISSED'} (${fixed(total.p50)} ms); ` +
      `docker exec p50 / drydock p50 >= ${TARGET_RATIO}x: ${ratioOk ? 'MET' : 'MISSED'} (${ratio.toFixed(1)}x)`);
    console.log(`drydock p50 ${fixed(total.p50)} ms | docker exec p50 ${fixed(baseline.p50)} ms | ratio ${ratio.toFixed(1)}x`);

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
            drydock: { summary: total, repl, overhead, cpuPerRequestMs, samples: drydock, warmup: { ...warmup, samples: warmupMs } },
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
    if (tenantKey) await endBusySessions(target.url, tenantKey, busy);
    if (sessionId && tenantKey) {
      const res = await endSession(target.url, tenantKey, sessionId);
      if (res.status !== 204 && !failed) console.warn(`warning: DELETE session answered ${res.status}: ${JSON.stringify(res.body)}`);
    }
    await target.close().catch((e: Error) => console.warn(`warning: closing the apps failed: ${e.message}`));
  }
}

// ---------------------------------------------------------------------------------------
// Busy neighbours (--busy-sessions)

const BUSY_CODE = 'while True: pass';
// The loop's limit: the default platform ceiling (SANDBOX_MAX_TIMEOUT_MS, 1 h); the bench
// ends the session long before.
const BUSY_TIMEOUT_MS = 3_600_000;
// How long a loop is given to start before the timed runs begin.
const BUSY_START_MS = 1_000;

interface BusySession {
  id: string;
  // The loop's request: it answers once the session is ended.
  answered: Promise<unknown>;
}

// Adds each to `started` as it starts, so that a failure half-way still ends them all.
async function startBusySessions(url: string, key: string, count: number, started: BusySession[]): Promise<void> {
  for (let i = 0; i < count; i++) {
    const { id } = await createSession(url, key, { limits: { timeoutMs: BUSY_TIMEOUT_MS } });
    const answered = api(url, key, 'POST', `/v1/sessions/${id}/executions`, { code: BUSY_CODE, timeoutMs: BUSY_TIMEOUT_MS }).catch((e: Error) => e);
    started.push({ id, answered });
  }
  if (!count) return;
  // A loop refused at once (a tenant limit under the timeout, say) would leave the cores idle.
  const early = await Promise.race([...started.map((b) => b.answered), new Promise((resolve) => setTimeout(resolve, BUSY_START_MS, null))]);
  if (early !== null) throw new BenchError(`a busy session's loop ended before the timed runs: ${JSON.stringify((early as { body?: unknown }).body ?? String(early))}`);
}

async function endBusySessions(url: string, key: string, busy: BusySession[]): Promise<void> {
  for (const b of busy) {
    const res = await endSession(url, key, b.id);
    if (res.status !== 204) console.warn(`warning: DELETE busy session ${b.id} answered ${res.status}: ${JSON.stringify(res.body)}`);
  }
  await Promise.all(busy.map((b) => b.answered));
}

runMain('exec-latency benchmark', main);
