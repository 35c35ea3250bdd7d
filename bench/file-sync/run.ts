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
// By default a gateway and a worker are booted in this process; with --url it benches a
// running deployment through its REST API. The worker-side figures (push, pull, the
// supervisor's change tracking as run) come from wrapped methods, so they exist
// in-process only; the end-to-end and in-container figures come out in both modes.
//
// A benchmark, not a test: it prints figures and only fails when an answer is wrong.
// See bench/README.md for how to run it and how to read the output.
//
//   npm run build && npm run bench:file-sync -- [options]
import 'reflect-metadata';
import { execFile } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { writeFile } from 'node:fs/promises';
import { cpus } from 'node:os';
import { promisify } from 'node:util';
import { DockerSandbox } from '@drydock/docker-sandbox';
import { type ThreadScope, VfsService } from '@drydock/vfs';
import { SessionFileSync } from '@drydock/session-host';
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
  request,
  runMain,
  summarize,
  summaryRow,
  SUMMARY_HEADERS,
  table,
  TARGET_ARGS,
  timeMethod,
  wholeNumber,
  type BenchTarget,
  type Summary,
} from '../lib/harness.js';

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
// Concurrent PUTs when the thread's files are written through the REST API (--url).
const UPLOAD_CONCURRENCY = 8;

const USAGE = `Usage: node dist/bench/file-sync/run.js [options]

  --sizes <list>     thread sizes in files of ~1 KB, comma-separated (BENCH_SIZES, default 0,100,1000)
  --n <count>        timed executions per size, and timed snapshot
                     pairs in the container per size               (BENCH_N, default 200)
  --warmup <count>   untimed warm-up executions per size           (BENCH_WARMUP, default 20)
  --url <url>        bench a running deployment through its REST API instead of
                     booting one in-process (BENCH_URL); worker-side rows are
                     in-process only
  --admin-key <key>  admin key of that deployment (BENCH_ADMIN_KEY, else DRYDOCK_ADMIN_KEY)
  --json <file>      also write every sample and summary to a JSON file
  -h, --help

In-process mode reads DATABASE_URL, REDIS_URL, DRYDOCK_ADMIN_KEY and SANDBOX_IMAGE
(defaults: the local dev services, see bench/README.md). The in-container reference
(full walk pair) needs each session's container (named by GET /admin/sessions) on the
local Docker host; it is skipped, with a note, when it is elsewhere.`;

// ---------------------------------------------------------------------------------------
// Options

interface Options {
  sizes: number[];
  n: number;
  warmup: number;
  url: string | null;
  adminKey: string;
  json: string | null;
}

function readOptions(): Options {
  const values = readArgs(
    { sizes: { type: 'string' }, n: { type: 'string' }, warmup: { type: 'string' }, ...TARGET_ARGS, json: { type: 'string' } },
    USAGE,
  );
  const env = process.env;
  const rawSizes = values.sizes ?? env.BENCH_SIZES ?? '0,100,1000';
  const sizes = rawSizes.split(',').map((s) => wholeNumber('--sizes / BENCH_SIZES (each)', s.trim(), NaN, 0));
  if (sizes.length === 0 || sizes.some((s) => Number.isNaN(s))) throw new BenchError(`--sizes needs a list like 0,100,1000 (got "${rawSizes}")`);
  if (sizes.some((s) => s > 99_999)) throw new BenchError('--sizes: at most 99999 files per thread');
  return {
    sizes,
    n: wholeNumber('--n / BENCH_N', values.n ?? env.BENCH_N, 200, 1),
    warmup: wholeNumber('--warmup / BENCH_WARMUP', values.warmup ?? env.BENCH_WARMUP, 20, 0),
    url: (values.url ?? env.BENCH_URL ?? '').replace(/\/+$/, '') || null,
    adminKey: values['admin-key'] ?? '',
    json: values.json ?? null,
  };
}

// ---------------------------------------------------------------------------------------
// Worker-side sync timing (in-process only): SessionFileSync.push and .pull, and
// DockerSandbox.run, wrapped at prototype level (after boot), so every call made while a
// timed execution is in flight is added to it. Costs about a microsecond per call.

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
    timeMethod(SessionFileSync.prototype, 'push', (ms) => {
      if (this.current) (this.current.pushMs += ms), (this.current.pushCalls += 1);
    });
    timeMethod(SessionFileSync.prototype, 'pull', (ms) => {
      if (this.current) (this.current.pullMs += ms), (this.current.pullCalls += 1);
    });
    timeMethod(DockerSandbox.prototype, 'run', (ms, result) => {
      const sample = this.current;
      if (!sample) return;
      const outcome = result as { durationMs?: number; trackingMs?: number } | undefined;
      sample.sandboxRunMs += ms;
      sample.replMs += typeof outcome?.durationMs === 'number' ? outcome.durationMs : NaN;
      sample.trackingMs += typeof outcome?.trackingMs === 'number' ? outcome.trackingMs : NaN;
    });
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
// Writing and deleting a thread's files: straight through the in-process VFS (as fast as
// it gets), or through the REST API of a running deployment.

interface ThreadFiles {
  write(scope: ThreadScope, files: { path: string; content: string }[]): Promise<void>;
  // Every file of the thread (leaves tombstone rows).
  remove(scope: ThreadScope): Promise<void>;
}

function threadFilesVia(target: BenchTarget, key: string): ThreadFiles {
  const local = target.local;
  if (local) {
    const vfs = local.gateway.get(VfsService);
    return {
      async write(scope, files) {
        for (let i = 0; i < files.length; i += 1000) {
          const written = await vfs.writeMany(scope, files.slice(i, i + 1000));
          if (written.length !== Math.min(1000, files.length - i)) {
            throw new BenchError(`writeMany returned ${written.length} results for ${Math.min(1000, files.length - i)} files`);
          }
        }
      },
      remove: async (scope) => void (await vfs.delete(scope, '/')),
    };
  }
  const filesPath = (scope: ThreadScope) => `/v1/threads/${encodeURIComponent(scope.threadId)}/files`;
  return {
    async write(scope, files) {
      let next = 0;
      const lane = async () => {
        for (let i = next++; i < files.length; i = next++) {
          const file = files[i]!;
          const url = `${target.url}${filesPath(scope)}/content?path=${encodeURIComponent(file.path)}`;
          const res = await request(url, { method: 'PUT', headers: { authorization: `Bearer ${key}`, 'content-type': 'text/plain' }, body: file.content });
          const text = await res.text();
          if (res.status !== 201 && res.status !== 200) throw new BenchError(`PUT ${url} answered ${res.status}: ${text.slice(0, 300)}`);
        }
      };
      await Promise.all(Array.from({ length: UPLOAD_CONCURRENCY }, lane));
    },
    async remove(scope) {
      const res = await api(target.url, key, 'DELETE', `${filesPath(scope)}?path=%2F`);
      if (res.status !== 204 && res.status !== 404) throw new BenchError(`DELETE the files of ${scope.threadId} answered ${res.status}: ${res.text.slice(0, 300)}`);
    },
  };
}

// ---------------------------------------------------------------------------------------
// Thread content: `size` files of ~1 KB under /data.

function threadFilesOf(size: number): { path: string; content: string }[] {
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

// Figures of one size. Worker-side ones (push, pull, tracking, run - REPL, sync adds) are
// null with --url; in-container ones (snapshot*, diff, tickWait) are null when the
// session's container is not on this Docker host.
interface SizeResult {
  size: number;
  threadId: string;
  sessionId: string;
  containerId: string;
  storage: string | null;
  firstRunMs: number;
  e2e: Summary;
  replDurationMs: Summary | null;
  push: Summary | null;
  pull: Summary | null;
  sync: Summary | null;
  runMinusRepl: Summary | null;
  tracking: Summary | null;
  snapshotPair: Summary | null;
  snapshotBefore: Summary | null;
  snapshotAfter: Summary | null;
  diff: Summary | null;
  tickWait: Summary | null;
  snapshotEntries: number | null;
  syncAddsP50: number | null;
  syncAddsWithTickP50: number | null;
  targetMet: boolean | null;
  samples: {
    e2eMs: number[];
    replDurationMs: Array<number | null>;
    worker: SyncSample[] | null;
    repl: Omit<ReplSamples, 'entries' | 'dirty'> | null;
  };
}

const IN_PROCESS_ONLY = 'worker push + pull, supervisor change tracking (as run), DockerSandbox.run - REPL durationMs, and so sync adds and its target';

async function main(): Promise<void> {
  const options = readOptions();
  const docker = await dockerVersion('to time the snapshots in the container');
  const target = await openTarget(options);
  const recorder = target.local ? new SyncRecorder() : null;
  const live = new Set<string>(); // sessions to delete
  const scopes: ThreadScope[] = []; // threads whose files to delete
  let tenantKey: string | null = null;
  let threadFiles: ThreadFiles | null = null;
  let failed = false;
  const results: SizeResult[] = [];
  try {
    const suffix = randomBytes(3).toString('hex');
    const tenant = await createTenant(target, { name: `bench-fs-${suffix}`, limits: { requestsPerMinute: 1_000_000 } });
    const key = (tenantKey = tenant.apiKey);
    const tenantId = tenant.id;
    threadFiles = threadFilesVia(target, key);

    console.log('Drydock file-sync benchmark: what mirroring thread files adds to a run that changes nothing');
    console.log(`  target     ${target.mode}, tenant ${tenantId}`);
    console.log(`  code       ${CODE}  -> expects status "ok", stdout ${JSON.stringify(EXPECTED_STDOUT)}, no file changes`);
    console.log(
      `  sizes      ${options.sizes.join(', ')} files of ${FILE_BYTES} B under ${DATA_DIR}` +
        ` (written ${target.local ? 'with VfsService.writeMany' : `by PUT /v1/threads/:id/files/content, ${UPLOAD_CONCURRENCY} at a time`})`,
    );
    console.log(
      `  runs       per size: ${options.warmup} warm-up + ${options.n} timed executions; ` +
        `${REPL_WARMUP} warm-up + ${options.n} timed snapshot pairs in the container`,
    );
    console.log(`  host       node ${process.version}, ${cpus().length} × ${cpus()[0]?.model.trim() ?? 'CPU'}, docker ${docker}`);
    if (!target.local) console.log(`  in-process only (not measured with --url): ${IN_PROCESS_ONLY}`);
    console.log('');

    recorder?.install();
    const execute = (sessionId: string, code: string) => api(target.url, key, 'POST', `/v1/sessions/${sessionId}/executions`, { code });

    for (const size of options.sizes) {
      // --- Thread with `size` files.
      const scope: ThreadScope = { tenantId, threadId: `bench-fs-${suffix}-${size}` };
      scopes.push(scope);
      const writeStarted = performance.now();
      await threadFiles.write(scope, threadFilesOf(size));
      const writeMs = performance.now() - writeStarted;

      // --- Session on that thread; its start pushes the files into /session.
      const sessionStarted = performance.now();
      const { id: sessionId, view: session } = await createSession(target.url, key, { threadId: scope.threadId });
      const sessionMs = performance.now() - sessionStarted;
      live.add(sessionId);
      const placedOn = session.workerId as string | undefined;
      if (target.local && placedOn && placedOn !== target.local.workerId) {
        console.warn(`warning: session ${sessionId} was placed on worker ${placedOn}, not on this process's ${target.local.workerId}`);
      }
      const containerId = await containerOfSession(target.url, target.adminKey, sessionId);
      const containerHere = (await localContainerImage(containerId)) !== null;

      // --- The first run must see the thread's files.
      const checkCode =
        `import os\nprint(len(os.listdir(${JSON.stringify(SESSION_ROOT + DATA_DIR)})) ` +
        `if os.path.isdir(${JSON.stringify(SESSION_ROOT + DATA_DIR)}) else 0)`;
      const firstStarted = performance.now();
      const first = await execute(sessionId, checkCode);
      const firstRunMs = performance.now() - firstStarted;
      if (first.status !== 200 || first.body?.status !== 'ok' || first.body?.stdout !== `${size}\n`) {
        throw new BenchError(
          `size ${size}: the first run does not see the thread's files: HTTP ${first.status}, status ${JSON.stringify(first.body?.status)}, ` +
            `stdout ${JSON.stringify(first.body?.stdout)} (expected ${JSON.stringify(`${size}\n`)}); body: ${first.text.slice(0, 500)}`,
        );
      }
      console.log(
        `size ${size}: thread ${scope.threadId} written in ${fixed(writeMs, 0)} ms; session ${sessionId} ` +
          `(${session.storage ?? '?'} storage, container ${containerId.slice(0, 12)}) started in ${fixed(sessionMs, 0)} ms; ` +
          `first run sees ${size} files (${fixed(firstRunMs, 1)} ms)`,
      );
      if (!containerHere) console.warn(`  note: container ${containerId.slice(0, 12)} is not on this Docker host: no in-container reference for size ${size}`);

      // --- Warm-up and timed executions of `x = 1`.
      const e2e: number[] = [];
      const replDuration: Array<number | null> = [];
      const worker: SyncSample[] = [];
      for (let i = 0; i < options.warmup + options.n; i++) {
        const timed = i >= options.warmup;
        if (timed) recorder?.begin();
        const t0 = performance.now();
        const run = await execute(sessionId, CODE);
        const totalMs = performance.now() - t0;
        const view = run.body;
        const untouched =
          Array.isArray(view?.files?.changed) && view.files.changed.length === 0 && Array.isArray(view?.files?.deleted) && view.files.deleted.length === 0;
        if (run.status !== 200 || view?.status !== 'ok' || view?.stdout !== EXPECTED_STDOUT || !untouched) {
          recorder?.discard();
          throw new BenchError(
            `size ${size}, run ${i + 1} is wrong: HTTP ${run.status}, status ${JSON.stringify(view?.status)}, ` +
              `stdout ${JSON.stringify(view?.stdout)}, files ${JSON.stringify(view?.files)} ` +
              `(expected "ok", ${JSON.stringify(EXPECTED_STDOUT)} and no changed/deleted files); body: ${run.text.slice(0, 500)}`,
          );
        }
        if (!timed) continue;
        if (recorder) {
          const sample = recorder.end()!;
          if (sample.pushCalls !== 1 || sample.pullCalls !== 1) {
            throw new BenchError(`size ${size}, run ${i + 1}: expected one push and one pull, saw ${sample.pushCalls} and ${sample.pullCalls}`);
          }
          worker.push(sample);
        }
        e2e.push(totalMs);
        replDuration.push(typeof view.durationMs === 'number' ? view.durationMs : null);
      }

      // --- REPL-side change report, same container, after the executions (not concurrently).
      const repl = containerHere ? await timeReplSnapshots(containerId, options.n) : null;
      if (repl && repl.dirty > 0) {
        throw new BenchError(`size ${size}: ${repl.dirty} of ${options.n} snapshot pairs reported changes in an untouched /session`);
      }
      if (repl && repl.entries < size) {
        throw new BenchError(`size ${size}: the snapshot saw ${repl.entries} entries under ${SESSION_ROOT}, expected at least ${size}`);
      }

      // --- Done with this session: one container at a time keeps the figures comparable.
      const del = await api(target.url, key, 'DELETE', `/v1/sessions/${sessionId}`);
      if (del.status !== 204) console.warn(`warning: DELETE session ${sessionId} answered ${del.status}: ${JSON.stringify(del.body)}`);
      else live.delete(sessionId);

      const sync = recorder ? summarize(worker.map((s) => s.pushMs + s.pullMs)) : null;
      const tracking = recorder ? summarize(worker.map((s) => s.trackingMs)) : null;
      const tickWait = repl ? summarize(repl.tick) : null;
      const syncAddsP50 = sync && tracking ? sync.p50 + tracking.p50 : null;
      results.push({
        size,
        threadId: scope.threadId,
        sessionId,
        containerId,
        storage: (session.storage as string | undefined) ?? null,
        firstRunMs,
        e2e: summarize(e2e),
        replDurationMs: replDuration.every((d) => d !== null) ? summarize(replDuration as number[]) : null,
        push: recorder ? summarize(worker.map((s) => s.pushMs)) : null,
        pull: recorder ? summarize(worker.map((s) => s.pullMs)) : null,
        sync,
        runMinusRepl: recorder ? summarize(worker.map((s) => s.sandboxRunMs - s.replMs)) : null,
        tracking,
        snapshotPair: repl ? summarize(repl.before.map((b, i) => b + repl.after[i]! + repl.diff[i]!)) : null,
        snapshotBefore: repl ? summarize(repl.before) : null,
        snapshotAfter: repl ? summarize(repl.after) : null,
        diff: repl ? summarize(repl.diff) : null,
        tickWait,
        snapshotEntries: repl?.entries ?? null,
        syncAddsP50,
        syncAddsWithTickP50: syncAddsP50 !== null && tickWait ? syncAddsP50 + tickWait.p50 : null,
        targetMet: syncAddsP50 !== null ? syncAddsP50 < TARGET_SYNC_P50_MS : null,
        samples: {
          e2eMs: e2e,
          replDurationMs: replDuration,
          worker: recorder ? worker : null,
          repl: repl ? { before: repl.before, tick: repl.tick, after: repl.after, diff: repl.diff } : null,
        },
      });
    }
    console.log('');

    // --- Report
    for (const r of results) {
      console.log(`size ${r.size} (${r.snapshotEntries ?? '?'} entries in ${SESSION_ROOT}, ${r.storage ?? '?'} storage):`);
      const rows = [summaryRow('end to end POST /executions x = 1', r.e2e)];
      const add = (label: string, s: Summary | null, digits = 3) => s && rows.push(summaryRow(label, s, digits));
      add('  REPL durationMs (API, whole ms)', r.replDurationMs, 2);
      add('worker push + pull', r.sync);
      add('  push (revision lookup)', r.push);
      add('  pull (empty report)', r.pull);
      add('supervisor change tracking (as run)', r.tracking);
      add('full walk pair + diff (reference)', r.snapshotPair);
      add('  snapshot before', r.snapshotBefore);
      add('  snapshot after', r.snapshotAfter);
      add('  diff', r.diff);
      add('REPL timestamp-tick wait', r.tickWait);
      add('DockerSandbox.run - REPL durationMs', r.runMinusRepl);
      console.log(table(SUMMARY_HEADERS, rows));
      console.log('');
    }

    const base = results.find((r) => r.size === 0) ?? results[0]!;
    const p50p90 = (s: Summary | null, digits = 3) => (s ? `${fixed(s.p50, digits)} / ${fixed(s.p90, digits)}` : '-');
    const runMinusReplVsBase = (r: SizeResult) => (r.runMinusRepl && base.runMinusRepl ? r.runMinusRepl.p50 - base.runMinusRepl.p50 : NaN);
    const syncAdds = target.local
      ? `sync adds = worker push+pull p50 + supervisor change tracking p50, target < ${TARGET_SYNC_P50_MS} ms; `
      : '';
    console.log(`Summary (p50 / p90 in ms; ${syncAdds}e2e ratio against size ${base.size}):`);
    const columns: Array<[string, (r: SizeResult) => string, boolean]> = [
      ['files', (r) => String(r.size), true],
      ['e2e x = 1', (r) => p50p90(r.e2e, 2), true],
      ['worker push+pull', (r) => p50p90(r.sync), !!target.local],
      ['change tracking', (r) => p50p90(r.tracking), !!target.local],
      ['full walk pair (ref)', (r) => p50p90(r.snapshotPair), true],
      ['sync adds p50', (r) => fixed(r.syncAddsP50 ?? NaN, 3), !!target.local],
      [`< ${TARGET_SYNC_P50_MS} ms`, (r) => (r.targetMet === null ? '-' : r.targetMet ? 'MET' : 'MISSED'), !!target.local],
      ['e2e p50 ratio', (r) => `${(r.e2e.p50 / base.e2e.p50).toFixed(2)}x`, true],
      ['run-REPL p50 vs base', (r) => fixed(runMinusReplVsBase(r), 3), !!target.local],
    ];
    const shown = columns.filter(([, , show]) => show);
    console.log(table(shown.map(([h]) => h), results.map((r) => shown.map(([, cell]) => cell(r)))));
    if (!target.local) console.log(`not measured with --url (in-process only): ${IN_PROCESS_ONLY}`);

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
        const res = await endSession(target.url, tenantKey, sessionId);
        if (res.status !== 204 && !failed) console.warn(`warning: DELETE session ${sessionId} answered ${res.status}: ${JSON.stringify(res.body)}`);
      }
    }
    for (const scope of scopes) {
      await threadFiles?.remove(scope).catch((e: Error) => console.warn(`warning: deleting the files of ${scope.threadId} failed: ${e.message}`));
    }
    await target.close().catch((e: Error) => console.warn(`warning: closing the apps failed: ${e.message}`));
  }
}

runMain('file-sync benchmark', main);
