// File-sync benchmark: what mirroring a thread's files into /session adds to an
// execution that changes nothing (`x = 1`), at several thread sizes.
//
// Two parts of the sync run on every execution, whatever the code does:
//   - worker side: SessionFileSync.push (one revision lookup when nothing changed) and
//     SessionFileSync.pull (returns at once on an empty change report), timed in-process
//     around every timed REST execution;
//   - REPL side: the supervisor's change tracking as it ran for each timed execution
//     (`trackingMs` of the done frame: inotify drain, and a walk of /session only when
//     something may have changed or the host wrote files).
// "sync adds" = worker push+pull p50 + supervisor change tracking p50; target < 2 ms.
// For reference, the full walk pair (snapshot before and after plus diff, what every
// exec paid before the change watch and still pays when files change) is timed inside
// the same container by a `docker exec` python process using the supervisor's functions.
//
// A benchmark, not a test: it prints figures and only fails when an answer is wrong.
// See bench/README.md for how to run it and how to read the output.
//
//   npm run build && npm run bench:file-sync -- [options]
import 'reflect-metadata';
import type { INestApplication, INestApplicationContext } from '@nestjs/common';
import Docker from 'dockerode';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import type { AddressInfo } from 'node:net';
import { cpus } from 'node:os';
import { parseArgs, promisify } from 'node:util';
import { DockerSandbox } from '@drydock/docker-sandbox';
import { type ThreadScope, VfsService } from '@drydock/vfs';
import { SessionFileSync } from '@drydock/session-host';
import { runMigrations } from '../../migrations/index.js';
import { containerOfSession } from '../lib/harness.js';

const execFileAsync = promisify(execFile);

const CODE = 'x = 1';
const EXPECTED_STDOUT = '';
const TARGET_SYNC_P50_MS = 2;
const FILE_BYTES = 1024;
const DATA_DIR = '/data';
// Untimed iterations of the in-container snapshot loop before the timed ones.
const REPL_WARMUP = 5;
const SUPERVISOR_DIR = '/opt/drydock/repl';
const SESSION_ROOT = '/session';

const USAGE = `Usage: node dist/bench/file-sync/run.js [options]

  --sizes <list>     thread sizes in files of ~1 KB, comma-separated (BENCH_SIZES, default 0,100,1000)
  --n <count>        timed executions per size, and timed snapshot
                     pairs in the container per size               (BENCH_N, default 200)
  --warmup <count>   untimed warm-up executions per size           (BENCH_WARMUP, default 20)
  --json <file>      also write every sample and summary to a JSON file
  -h, --help

Boots a gateway and a worker in this process. Reads DATABASE_URL, REDIS_URL,
DRYDOCK_ADMIN_KEY and SANDBOX_IMAGE (defaults: the local dev services, see
bench/README.md). The container is found by its drydock.session label on the local
Docker daemon (DOCKER_SOCKET, default /var/run/docker.sock).`;

// ---------------------------------------------------------------------------------------
// Options

interface Options {
  sizes: number[];
  n: number;
  warmup: number;
  json: string | null;
}

class BenchError extends Error {}

function readOptions(): Options {
  let values: Record<string, string | boolean | undefined>;
  try {
    ({ values } = parseArgs({
      options: {
        sizes: { type: 'string' },
        n: { type: 'string' },
        warmup: { type: 'string' },
        json: { type: 'string' },
        help: { type: 'boolean', short: 'h' },
      },
      strict: true,
      allowPositionals: false,
    }));
  } catch (error) {
    throw new BenchError(`${(error as Error).message}\n\n${USAGE}`);
  }
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const env = process.env;
  const count = (name: string, raw: string | boolean | undefined, def: number, min: number): number => {
    if (raw === undefined || raw === '') return def;
    const value = Number(raw);
    if (!Number.isInteger(value) || value < min) throw new BenchError(`${name} must be an integer >= ${min} (got "${raw}")`);
    return value;
  };
  const rawSizes = (values.sizes ?? env.BENCH_SIZES ?? '0,100,1000') as string;
  const sizes = rawSizes.split(',').map((s) => count('--sizes / BENCH_SIZES (each)', s.trim(), NaN, 0));
  if (sizes.length === 0 || sizes.some((s) => Number.isNaN(s))) throw new BenchError(`--sizes needs a list like 0,100,1000 (got "${rawSizes}")`);
  if (sizes.some((s) => s > 99_999)) throw new BenchError('--sizes: at most 99999 files per thread');
  return {
    sizes,
    n: count('--n / BENCH_N', (values.n ?? env.BENCH_N) as string | undefined, 200, 1),
    warmup: count('--warmup / BENCH_WARMUP', (values.warmup ?? env.BENCH_WARMUP) as string | undefined, 20, 0),
    json: (values.json as string | undefined) ?? null,
  };
}

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

function summaryRow(label: string, s: Summary, digits = 2): string[] {
  return [label, String(s.n), ...[s.min, s.p50, s.p90, s.p99, s.max, s.mean, s.stdev].map((x) => ms(x, digits))];
}
const SUMMARY_HEADERS = ['(ms)', 'n', 'min', 'p50', 'p90', 'p99', 'max', 'mean', 'stdev'];

// ---------------------------------------------------------------------------------------
// Worker-side sync timing: SessionFileSync.push and .pull wrapped at prototype level
// (after boot), so every call made while a timed execution is in flight is added to it.
// Costs about a microsecond per call.

interface SyncSample {
  pushMs: number;
  pullMs: number;
  pushCalls: number;
  pullCalls: number;
  // DockerSandbox.run (attach round trip, which holds the supervisor's snapshots) and
  // the supervisor's float durationMs (the exec alone, snapshots excluded).
  sandboxRunMs: number;
  replMs: number;
  // The supervisor's change tracking for this exec (done frame `trackingMs`).
  trackingMs: number;
}

class SyncRecorder {
  private current: SyncSample | null = null;
  readonly samples: SyncSample[] = [];

  begin(): void {
    this.current = { pushMs: 0, pullMs: 0, pushCalls: 0, pullCalls: 0, sandboxRunMs: 0, replMs: 0, trackingMs: 0 };
  }

  end(): SyncSample | null {
    const sample = this.current;
    if (sample) this.samples.push(sample);
    this.current = null;
    return sample;
  }

  discard(): void {
    this.current = null;
  }

  install(): void {
    const proto = SessionFileSync.prototype as unknown as Record<string, unknown>;
    for (const [method, key, calls] of [
      ['push', 'pushMs', 'pushCalls'],
      ['pull', 'pullMs', 'pullCalls'],
    ] as const) {
      const original = proto[method];
      if (typeof original !== 'function') throw new BenchError(`SessionFileSync.prototype.${method} is gone: the bench needs updating`);
      const recorder = this;
      proto[method] = async function (this: unknown, ...args: unknown[]) {
        const started = performance.now();
        try {
          return await (original as (...a: unknown[]) => unknown).apply(this, args);
        } finally {
          const sample = recorder.current;
          if (sample) {
            sample[key] += performance.now() - started;
            sample[calls] += 1;
          }
        }
      };
    }
    const sandboxProto = DockerSandbox.prototype as unknown as Record<string, unknown>;
    const run = sandboxProto.run;
    if (typeof run !== 'function') throw new BenchError('DockerSandbox.prototype.run is gone: the bench needs updating');
    const recorder = this;
    sandboxProto.run = async function (this: unknown, ...args: unknown[]) {
      const started = performance.now();
      const outcome = (await (run as (...a: unknown[]) => unknown).apply(this, args)) as { durationMs?: number; trackingMs?: number };
      const sample = recorder.current;
      if (sample) {
        sample.sandboxRunMs += performance.now() - started;
        sample.replMs += typeof outcome?.durationMs === 'number' ? outcome.durationMs : NaN;
        sample.trackingMs += typeof outcome?.trackingMs === 'number' ? outcome.trackingMs : NaN;
      }
      return outcome;
    };
  }
}

// ---------------------------------------------------------------------------------------
// REPL-side change report, timed in the container with the supervisor's own functions.
// Per iteration: snapshot before, timestamp-tick wait, snapshot after, diff (as
// start_exec and finish_exec do around every exec, minus the exec itself).

const REPL_SCRIPT = `
import json, sys, time
sys.dont_write_bytecode = True
sys.path.insert(0, ${JSON.stringify(SUPERVISOR_DIR)})
from drydock_supervisor import session_tree as s
n, warmup, root = int(sys.argv[1]), int(sys.argv[2]), ${JSON.stringify(SESSION_ROOT)}
pc = time.perf_counter_ns
out = {"before": [], "tick": [], "after": [], "diff": []}
entries, dirty = None, 0
for i in range(warmup + n):
    t0 = pc()
    before = s.take_snapshot(root)
    t1 = pc()
    s.wait_for_timestamp_tick(before.newest_ns)
    t2 = pc()
    after = s.take_snapshot(root)
    t3 = pc()
    report = s.diff_snapshots(before, after)
    t4 = pc()
    if i < warmup:
        continue
    entries = len(after.entries)
    if report["changed"] or report["deleted"] or report["skipped"] or report.get("truncated"):
        dirty += 1
    out["before"].append((t1 - t0) / 1e6)
    out["tick"].append((t2 - t1) / 1e6)
    out["after"].append((t3 - t2) / 1e6)
    out["diff"].append((t4 - t3) / 1e6)
out["entries"] = entries
out["dirty"] = dirty
print(json.dumps(out))
`;

interface ReplSamples {
  before: number[];
  tick: number[];
  after: number[];
  diff: number[];
  entries: number;
  dirty: number;
}

async function timeReplSnapshots(containerId: string, n: number): Promise<ReplSamples> {
  let stdout: string;
  try {
    ({ stdout } = await execFileAsync(
      'docker',
      // As the sandbox user (the container starts as root, which cannot read /session).
      ['exec', '-u', '10001:10001', containerId, 'python3', '-c', REPL_SCRIPT, String(n), String(REPL_WARMUP)],
      { encoding: 'utf8', maxBuffer: 64 * 1024 * 1024 },
    ));
  } catch (error) {
    throw new BenchError(`timing the snapshots in the container failed: ${(error as Error).message.trim()}`);
  }
  let parsed: ReplSamples;
  try {
    parsed = JSON.parse(stdout) as ReplSamples;
  } catch {
    throw new BenchError(`the snapshot timing printed something that is not JSON: ${stdout.slice(0, 500)}`);
  }
  if (!Array.isArray(parsed.before) || parsed.before.length !== n) {
    throw new BenchError(`the snapshot timing returned ${parsed.before?.length} samples, expected ${n}`);
  }
  return parsed;
}

// ---------------------------------------------------------------------------------------
// The platform, in-process.

interface Platform {
  url: string;
  adminKey: string;
  workerId: string;
  gateway: INestApplication;
  close(): Promise<void>;
}

async function startInProcess(): Promise<Platform> {
  const env = process.env;
  env.DATABASE_URL ??= 'postgres://drydock:drydock@127.0.0.1:5432/drydock';
  env.REDIS_URL ??= 'redis://127.0.0.1:6379/0';
  env.DRYDOCK_ADMIN_KEY ??= 'dev-admin-key-0123456789abcdef';
  // The gateway refuses to start without it; benches sign no links.
  env.ARTIFACTS_SIGNING_SECRET ??= 'bench-signing-secret-0123456789abcdef0123';
  env.SANDBOX_IMAGE ??= 'drydock/sandbox:latest';
  const workerId = `bench-${randomBytes(4).toString('hex')}`;
  Object.assign(env, { WORKER_ID: workerId, GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1' });
  // Loaded only here: the app modules read the environment when they are imported.
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
    workerId,
    gateway,
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

async function api(base: string, key: string, method: string, path: string, body?: unknown): Promise<{ status: number; body: any }> {
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
// Thread content: `size` files of ~1 KB under /data.

function threadFiles(size: number): { path: string; content: string }[] {
  const files: { path: string; content: string }[] = [];
  for (let i = 1; i <= size; i++) {
    const name = `f${String(i).padStart(4, '0')}.txt`;
    const head = `file ${name} of ${size}\n`;
    const line = `${'lorem ipsum dolor sit amet '.repeat(2).trim()} ${i}\n`;
    let content = head;
    while (content.length + line.length < FILE_BYTES) content += line;
    files.push({ path: `${DATA_DIR}/${name}`, content: content.padEnd(FILE_BYTES - 1, '.') + '\n' });
  }
  return files;
}

// ---------------------------------------------------------------------------------------
// Main

interface SizeResult {
  size: number;
  threadId: string;
  sessionId: string;
  containerId: string;
  storage: string | null;
  firstRunMs: number;
  e2e: Summary;
  replDurationMs: Summary | null;
  push: Summary;
  pull: Summary;
  sync: Summary;
  runMinusRepl: Summary;
  tracking: Summary;
  snapshotPair: Summary;
  snapshotBefore: Summary;
  snapshotAfter: Summary;
  diff: Summary;
  tickWait: Summary;
  snapshotEntries: number;
  syncAddsP50: number;
  syncAddsWithTickP50: number;
  targetMet: boolean;
  samples: {
    e2eMs: number[];
    replDurationMs: Array<number | null>;
    worker: SyncSample[];
    repl: Omit<ReplSamples, 'entries' | 'dirty'>;
  };
}

async function main(): Promise<number> {
  const options = readOptions();
  const docker = new Docker({ socketPath: process.env.DOCKER_SOCKET ?? '/var/run/docker.sock' });
  const dockerVersion = await execFileAsync('docker', ['version', '--format', '{{.Server.Version}}']).catch((error: Error) => {
    throw new BenchError(`the docker CLI is needed to time the snapshots in the container and failed: ${error.message.split('\n')[0]}`);
  });

  const platform = await startInProcess();
  const recorder = new SyncRecorder();
  const vfs = platform.gateway.get(VfsService);
  const live = new Set<string>(); // sessions to delete
  const scopes: ThreadScope[] = []; // threads whose files to delete
  let tenantKey: string | null = null;
  let failed = false;
  const results: SizeResult[] = [];
  try {
    const suffix = randomBytes(3).toString('hex');
    const tenant = await api(platform.url, platform.adminKey, 'POST', '/admin/tenants', { name: `bench-fs-${suffix}` });
    if (tenant.status !== 201 || typeof tenant.body?.apiKey !== 'string' || typeof tenant.body?.id !== 'string') {
      throw new BenchError(`POST /admin/tenants answered ${tenant.status}: ${JSON.stringify(tenant.body)} (is the admin key right?)`);
    }
    tenantKey = tenant.body.apiKey as string;
    const tenantId = tenant.body.id as string;
    const key = tenantKey;

    console.log('Drydock file-sync benchmark: what mirroring thread files adds to a run that changes nothing');
    console.log(`  target     in-process gateway + worker ${platform.workerId}, tenant ${tenantId}`);
    console.log(`  code       ${CODE}  -> expects status "ok", stdout ${JSON.stringify(EXPECTED_STDOUT)}, no file changes`);
    console.log(`  sizes      ${options.sizes.join(', ')} files of ${FILE_BYTES} B under ${DATA_DIR}`);
    console.log(
      `  runs       per size: ${options.warmup} warm-up + ${options.n} timed executions; ` +
        `${REPL_WARMUP} warm-up + ${options.n} timed snapshot pairs in the container`,
    );
    console.log(
      `  host       node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'CPU'}, docker ${dockerVersion.stdout.trim()}`,
    );
    console.log('');

    recorder.install();
    const headers = { authorization: `Bearer ${key}`, 'content-type': 'application/json', accept: 'application/json' };
    const execute = async (sessionId: string, code: string) => {
      const res = await request(`${platform.url}/v1/sessions/${sessionId}/executions`, {
        method: 'POST',
        headers,
        body: JSON.stringify({ code }),
      });
      const text = await res.text();
      let view: any;
      try {
        view = JSON.parse(text);
      } catch {
        view = text;
      }
      return { status: res.status, view, text };
    };

    for (const size of options.sizes) {
      // --- Thread with `size` files, written straight through the VFS.
      const scope: ThreadScope = { tenantId, threadId: `bench-fs-${suffix}-${size}` };
      scopes.push(scope);
      const files = threadFiles(size);
      const writeStarted = performance.now();
      for (let i = 0; i < files.length; i += 1000) {
        const written = await vfs.writeMany(scope, files.slice(i, i + 1000));
        if (written.length !== Math.min(1000, files.length - i)) {
          throw new BenchError(`writeMany returned ${written.length} results for ${Math.min(1000, files.length - i)} files`);
        }
      }
      const writeMs = performance.now() - writeStarted;

      // --- Session on that thread; its start pushes the files into /session.
      const sessionStarted = performance.now();
      const session = await api(platform.url, key, 'POST', '/v1/sessions', { threadId: scope.threadId });
      if ((session.status !== 201 && session.status !== 200) || typeof session.body?.id !== 'string') {
        throw new BenchError(`POST /v1/sessions answered ${session.status}: ${JSON.stringify(session.body)}`);
      }
      const sessionMs = performance.now() - sessionStarted;
      const sessionId = session.body.id as string;
      live.add(sessionId);
      const placedOn = session.body.workerId as string | undefined;
      if (placedOn && placedOn !== platform.workerId) {
        console.warn(`warning: session ${sessionId} was placed on worker ${placedOn}, not on this process's ${platform.workerId}`);
      }
      const containerId = await containerOfSession(platform.url, platform.adminKey, sessionId);

      // --- The first run must see the thread's files.
      const checkCode =
        `import os\nprint(len(os.listdir(${JSON.stringify(SESSION_ROOT + DATA_DIR)})) ` +
        `if os.path.isdir(${JSON.stringify(SESSION_ROOT + DATA_DIR)}) else 0)`;
      const firstStarted = performance.now();
      const first = await execute(sessionId, checkCode);
      const firstRunMs = performance.now() - firstStarted;
      if (first.status !== 200 || first.view?.status !== 'ok' || first.view?.stdout !== `${size}\n`) {
        throw new BenchError(
          `size ${size}: the first run does not see the thread's files: HTTP ${first.status}, status ${JSON.stringify(first.view?.status)}, ` +
            `stdout ${JSON.stringify(first.view?.stdout)} (expected ${JSON.stringify(`${size}\n`)}); body: ${first.text.slice(0, 500)}`,
        );
      }
      console.log(
        `size ${size}: thread ${scope.threadId} written in ${ms(writeMs, 0)} ms; session ${sessionId} ` +
          `(${session.body.storage ?? '?'} storage, container ${containerId.slice(0, 12)}) started in ${ms(sessionMs, 0)} ms; ` +
          `first run sees ${size} files (${ms(firstRunMs, 1)} ms)`,
      );

      // --- Warm-up and timed executions of `x = 1`.
      const e2e: number[] = [];
      const replDuration: Array<number | null> = [];
      const worker: SyncSample[] = [];
      for (let i = 0; i < options.warmup + options.n; i++) {
        const timed = i >= options.warmup;
        if (timed) recorder.begin();
        const t0 = performance.now();
        const run = await execute(sessionId, CODE);
        const totalMs = performance.now() - t0;
        const view = run.view;
        const untouched =
          Array.isArray(view?.files?.changed) && view.files.changed.length === 0 && Array.isArray(view?.files?.deleted) && view.files.deleted.length === 0;
        if (run.status !== 200 || view?.status !== 'ok' || view?.stdout !== EXPECTED_STDOUT || !untouched) {
          recorder.discard();
          throw new BenchError(
            `size ${size}, run ${i + 1} is wrong: HTTP ${run.status}, status ${JSON.stringify(view?.status)}, ` +
              `stdout ${JSON.stringify(view?.stdout)}, files ${JSON.stringify(view?.files)} ` +
              `(expected "ok", ${JSON.stringify(EXPECTED_STDOUT)} and no changed/deleted files); body: ${run.text.slice(0, 500)}`,
          );
        }
        if (!timed) continue;
        const sample = recorder.end()!;
        if (sample.pushCalls !== 1 || sample.pullCalls !== 1) {
          throw new BenchError(`size ${size}, run ${i + 1}: expected one push and one pull, saw ${sample.pushCalls} and ${sample.pullCalls}`);
        }
        e2e.push(totalMs);
        replDuration.push(typeof view.durationMs === 'number' ? view.durationMs : null);
        worker.push(sample);
      }

      // --- REPL-side change report, same container, after the executions (not concurrently).
      const repl = await timeReplSnapshots(containerId, options.n);
      if (repl.dirty > 0) {
        throw new BenchError(`size ${size}: ${repl.dirty} of ${options.n} snapshot pairs reported changes in an untouched /session`);
      }
      if (repl.entries < size) {
        throw new BenchError(`size ${size}: the snapshot saw ${repl.entries} entries under ${SESSION_ROOT}, expected at least ${size}`);
      }

      // --- Done with this session: one container at a time keeps the figures comparable.
      const del = await api(platform.url, key, 'DELETE', `/v1/sessions/${sessionId}`);
      if (del.status !== 204) console.warn(`warning: DELETE session ${sessionId} answered ${del.status}: ${JSON.stringify(del.body)}`);
      else live.delete(sessionId);

      const pair = repl.before.map((b, i) => b + repl.after[i]! + repl.diff[i]!);
      const sync = summarize(worker.map((s) => s.pushMs + s.pullMs));
      const snapshotPair = summarize(pair);
      const tickWait = summarize(repl.tick);
      const tracking = summarize(worker.map((s) => s.trackingMs));
      const syncAddsP50 = sync.p50 + tracking.p50;
      results.push({
        size,
        threadId: scope.threadId,
        sessionId,
        containerId,
        storage: (session.body.storage as string | undefined) ?? null,
        firstRunMs,
        e2e: summarize(e2e),
        replDurationMs: replDuration.every((d) => d !== null) ? summarize(replDuration as number[]) : null,
        push: summarize(worker.map((s) => s.pushMs)),
        pull: summarize(worker.map((s) => s.pullMs)),
        sync,
        runMinusRepl: summarize(worker.map((s) => s.sandboxRunMs - s.replMs)),
        tracking,
        snapshotPair,
        snapshotBefore: summarize(repl.before),
        snapshotAfter: summarize(repl.after),
        diff: summarize(repl.diff),
        tickWait,
        snapshotEntries: repl.entries,
        syncAddsP50,
        syncAddsWithTickP50: syncAddsP50 + tickWait.p50,
        targetMet: syncAddsP50 < TARGET_SYNC_P50_MS,
        samples: {
          e2eMs: e2e,
          replDurationMs: replDuration,
          worker,
          repl: { before: repl.before, tick: repl.tick, after: repl.after, diff: repl.diff },
        },
      });
    }
    console.log('');

    // --- Report
    for (const r of results) {
      console.log(`size ${r.size} (${r.snapshotEntries} entries in ${SESSION_ROOT}, ${r.storage ?? '?'} storage):`);
      const rows = [summaryRow('end to end POST /executions x = 1', r.e2e)];
      if (r.replDurationMs) rows.push(summaryRow('  REPL durationMs (API, whole ms)', r.replDurationMs));
      rows.push(
        summaryRow('worker push + pull', r.sync, 3),
        summaryRow('  push (revision lookup)', r.push, 3),
        summaryRow('  pull (empty report)', r.pull, 3),
        summaryRow('supervisor change tracking (as run)', r.tracking, 3),
        summaryRow('full walk pair + diff (reference)', r.snapshotPair, 3),
        summaryRow('  snapshot before', r.snapshotBefore, 3),
        summaryRow('  snapshot after', r.snapshotAfter, 3),
        summaryRow('  diff', r.diff, 3),
        summaryRow('REPL timestamp-tick wait', r.tickWait, 3),
        summaryRow('DockerSandbox.run - REPL durationMs', r.runMinusRepl, 3),
      );
      console.log(table(SUMMARY_HEADERS, rows));
      console.log('');
    }

    const base = results.find((r) => r.size === 0) ?? results[0]!;
    console.log(
      `Summary (p50 / p90 in ms; sync adds = worker push+pull p50 + supervisor change tracking p50, target < ${TARGET_SYNC_P50_MS} ms; ` +
        `e2e ratio against size ${base.size}):`,
    );
    const summaryRows = results.map((r) => [
      String(r.size),
      `${ms(r.e2e.p50)} / ${ms(r.e2e.p90)}`,
      `${ms(r.sync.p50, 3)} / ${ms(r.sync.p90, 3)}`,
      `${ms(r.tracking.p50, 3)} / ${ms(r.tracking.p90, 3)}`,
      `${ms(r.snapshotPair.p50, 3)} / ${ms(r.snapshotPair.p90, 3)}`,
      ms(r.syncAddsP50, 3),
      r.targetMet ? 'MET' : 'MISSED',
      `${(r.e2e.p50 / base.e2e.p50).toFixed(2)}x`,
      ms(r.runMinusRepl.p50 - base.runMinusRepl.p50, 3),
    ]);
    console.log(
      table(
        ['files', 'e2e x = 1', 'worker push+pull', 'change tracking', 'full walk pair (ref)', 'sync adds p50', `< ${TARGET_SYNC_P50_MS} ms`, 'e2e p50 ratio', 'run-REPL p50 vs base'],
        summaryRows,
      ),
    );

    if (options.json) {
      await writeFile(
        options.json,
        JSON.stringify(
          {
            at: new Date().toISOString(),
            target: `in-process gateway + worker ${platform.workerId}`,
            options,
            node: process.version,
            cpus: cpus().length,
            code: CODE,
            fileBytes: FILE_BYTES,
            targetSyncP50Ms: TARGET_SYNC_P50_MS,
            ratioBaseSize: base.size,
            sizes: results.map((r) => ({ ...r, e2eP50Ratio: r.e2e.p50 / base.e2e.p50 })),
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
    if (tenantKey) {
      for (const sessionId of live) {
        const res = await api(platform.url, tenantKey, 'DELETE', `/v1/sessions/${sessionId}`).catch((e: Error) => ({ status: 0, body: e.message }));
        if (res.status !== 204 && !failed) console.warn(`warning: DELETE session ${sessionId} answered ${res.status}: ${JSON.stringify(res.body)}`);
      }
    }
    for (const scope of scopes) {
      await vfs.delete(scope, '/').catch((e: Error) => console.warn(`warning: deleting the files of ${scope.threadId} failed: ${e.message}`));
    }
    await platform.close().catch((e: Error) => console.warn(`warning: closing the apps failed: ${e.message}`));
  }
  return 0;
}

main().then(
  (code) => {
    process.exitCode = code;
  },
  (error: unknown) => {
    console.error(`\nfile-sync benchmark aborted: ${error instanceof BenchError ? error.message : ((error as Error)?.stack ?? error)}`);
    process.exitCode = 1;
  },
);
