// bench/hibernate: resuming a hibernated gvisor session against what a session without
// hibernation costs, in the same run (issue 54's targets):
//   - resume to first result of a session holding a few hundred MB of Python objects:
//     p50 under 1.5 s, and at least 3x faster than a fresh session re-running the cells
//     that built that state;
//   - --many N: N hibernated sessions (no container, no worker memory), their
//     checkpoint bytes;
//   - execution latency (`pass`) on the gvisor tier against runc, same run.
//
//   npm run build && npm run bench:hibernate -- [--n 5] [--mb 200] [--many 0] [--exec-n 200]
//
// Needs SANDBOX_GVISOR_RUNTIME's runtime registered with Docker (scripts/start.sh
// --gvisor, or scripts/test.sh). Gateway and worker are booted in this process (the
// hibernation's size is read from the platform's repository).
import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { SESSIONS_REPOSITORY, type SessionsRepository } from '@drydock/sessions';
import {
  api,
  BenchError,
  createSession,
  createTenant,
  deleteTenant,
  fixed,
  openTarget,
  readArgs,
  runMain,
  summarize,
  summaryRow,
  SUMMARY_HEADERS,
  table,
  wholeNumber,
} from '../lib/harness.js';
import { machineProbeLine } from '../lib/machine-probe.js';

const execFileAsync = promisify(execFile);

const USAGE = `npm run bench:hibernate -- [options]
  --n <count>        hibernate/resume rounds, each against a fresh session re-running the cells (default 5)
  --mb <MB>          Python objects the session holds, about (default 200)
  --many <count>     also hibernate this many small sessions and report what they hold (default 0)
  --exec-n <count>   timed 'pass' executions on each tier (default 200)`;

const TARGET_RESUME_P50_MS = 1500;
const TARGET_VS_FRESH = 3;

// The cells that build the state: pandas and numpy imported, a frame of `mb` MB of
// Python objects (strings in an object column, floats) and a dict of its rows' keys.
const cells = (mb: number) => {
  const rows = Math.round((mb * 1024 * 1024) / 200);
  return [
    'import numpy as np, pandas as pd',
    `rows = ${rows}\nframe = pd.DataFrame({"key": [f"row-{i:09d}" for i in range(rows)], "value": np.arange(rows, dtype="float64")})`,
    'index = {k: i for i, k in enumerate(frame["key"].tolist()[:200000])}\ntotal = float(frame["value"].sum())',
  ];
};
const PROBE = 'print(len(frame), int(total), len(index))';

async function run(base: string, key: string, sessionId: string, code: string) {
  const started = performance.now();
  const res = await api(base, key, 'POST', `/v1/sessions/${sessionId}/executions`, { code, timeoutMs: 300_000 });
  const ms = performance.now() - started;
  if (res.status !== 200 || res.body.status !== 'ok') throw new BenchError(`an execution answered ${res.status}: ${JSON.stringify(res.body).slice(0, 400)}`);
  return { ms, body: res.body };
}

async function main() {
  const args = readArgs(
    { n: { type: 'string' }, mb: { type: 'string' }, many: { type: 'string' }, 'exec-n': { type: 'string' } },
    USAGE,
  );
  const n = wholeNumber('--n', args.n, 5, 1);
  const mb = wholeNumber('--mb', args.mb, 200, 1);
  const many = wholeNumber('--many', args.many, 0, 0);
  const execN = wholeNumber('--exec-n', args['exec-n'], 200, 1);
  const target = await openTarget({}, { SANDBOX_GVISOR_RUNTIME: process.env.SANDBOX_GVISOR_RUNTIME || 'runsc', SESSION_HIBERNATE_AFTER_MS: '86400000', WORKER_CAPACITY: String(Math.max(50, many + 10)) });
  const repo = target.local!.gateway.get<SessionsRepository>(SESSIONS_REPOSITORY, { strict: false });
  const tenant = await createTenant(target, { name: 'bench-hibernate', limits: { memoryMb: Math.max(1024, mb * 4), maxSessions: many + 20 } });
  const key = tenant.apiKey;
  console.log(machineProbeLine());
  console.log(`${target.mode}; ${mb} MB of Python objects, ${n} rounds\n`);
  try {
    const resume: number[] = [];
    const resumedMs: number[] = [];
    const hibernate: number[] = [];
    const fresh: number[] = [];
    const bytes: number[] = [];
    const limits = { memoryMb: Math.max(1024, mb * 4) };
    for (let round = 0; round < n; round++) {
      // Without hibernation: a new session and the cells again, to the same first result.
      const freshStarted = performance.now();
      const other = await createSession(target.url, key, { tier: 'gvisor', limits });
      for (const cell of cells(mb)) await run(target.url, key, other.id, cell);
      const first = await run(target.url, key, other.id, PROBE);
      fresh.push(performance.now() - freshStarted);
      await api(target.url, key, 'DELETE', `/v1/sessions/${other.id}`);

      const session = await createSession(target.url, key, { tier: 'gvisor', limits });
      for (const cell of cells(mb)) await run(target.url, key, session.id, cell);
      const hibernateStarted = performance.now();
      const h = await api(target.url, key, 'POST', `/v1/sessions/${session.id}/hibernate`);
      if (h.status !== 202) throw new BenchError(`hibernate answered ${h.status}: ${JSON.stringify(h.body)}`);
      hibernate.push(performance.now() - hibernateStarted);
      const row = await repo.findById(tenant.id, session.id);
      const checkpoint = row?.hibernationId ? await repo.findCheckpoint(tenant.id, row.hibernationId) : null;
      if (checkpoint) bytes.push(checkpoint.sizeBytes);
      const resumed = await run(target.url, key, session.id, PROBE);
      if (resumed.body.stateLost || resumed.body.stdout !== first.body.stdout) throw new BenchError(`the resume lost the state: ${JSON.stringify(resumed.body).slice(0, 300)}`);
      resume.push(resumed.ms);
      resumedMs.push(resumed.body.resumedMs ?? NaN);
      await api(target.url, key, 'DELETE', `/v1/sessions/${session.id}`);
      process.stdout.write(`round ${round + 1}/${n}: resume ${fixed(resumed.ms, 0)} ms, fresh + cells ${fixed(fresh[fresh.length - 1]!, 0)} ms\n`);
    }
    const r = summarize(resume);
    const f = summarize(fresh);
    console.log(
      '\n' +
        table(SUMMARY_HEADERS, [
          summaryRow('resume to first result', r, 0),
          summaryRow('  of which the restore (resumedMs)', summarize(resumedMs), 0),
          summaryRow('fresh session + the cells', f, 0),
          summaryRow('hibernate (POST .../hibernate)', summarize(hibernate), 0),
        ]),
    );
    const stored = bytes.length ? summarize(bytes).p50 / 1024 / 1024 : NaN;
    console.log(`\ncheckpoint stored (gzip): ${fixed(stored, 1)} MB p50`);
    console.log(`resume p50 ${fixed(r.p50, 0)} ms (target < ${TARGET_RESUME_P50_MS}): ${r.p50 < TARGET_RESUME_P50_MS ? 'met' : 'MISSED'}`);
    const ratio = f.p50 / r.p50;
    console.log(`fresh + cells / resume, p50: ${fixed(ratio, 1)}x (target >= ${TARGET_VS_FRESH}x): ${ratio >= TARGET_VS_FRESH ? 'met' : 'MISSED'}`);

    // Execution latency: `pass` on a warm session of each tier, alternating.
    const runc = await createSession(target.url, key, {});
    const gvisor = await createSession(target.url, key, { tier: 'gvisor' });
    const lat: Record<string, number[]> = { runc: [], gvisor: [] };
    for (let i = 0; i < 20; i++) for (const s of [runc, gvisor]) await run(target.url, key, s.id, 'pass');
    for (let i = 0; i < execN; i++) {
      for (const [name, s] of [['runc', runc], ['gvisor', gvisor]] as const) lat[name]!.push((await run(target.url, key, s.id, 'pass')).ms);
    }
    const lr = summarize(lat.runc!);
    const lg = summarize(lat.gvisor!);
    console.log('\n' + table(SUMMARY_HEADERS, [summaryRow("'pass' on runc", lr), summaryRow("'pass' on gvisor", lg)]));
    console.log(`gvisor / runc execution latency, p50: ${fixed(lg.p50 / lr.p50, 2)}x`);

    if (many > 0) {
      const ids: string[] = [];
      let total = 0;
      const started = performance.now();
      for (let i = 0; i < many; i++) {
        const s = await createSession(target.url, key, { tier: 'gvisor', threadId: `many-${i}` });
        await run(target.url, key, s.id, `state = {"n": ${i}, "words": ["w"] * 1000}`);
        const h = await api(target.url, key, 'POST', `/v1/sessions/${s.id}/hibernate`);
        if (h.status !== 202) throw new BenchError(`hibernate ${i} answered ${h.status}: ${JSON.stringify(h.body)}`);
        const row = await repo.findById(tenant.id, s.id);
        total += (row?.hibernationId ? (await repo.findCheckpoint(tenant.id, row.hibernationId))?.sizeBytes : 0) ?? 0;
        ids.push(s.id);
        if ((i + 1) % 50 === 0) process.stdout.write(`${i + 1}/${many} hibernated\n`);
      }
      const { stdout } = await execFileAsync('docker', ['ps', '-aq', '--filter', `label=drydock.tenant=${tenant.id}`]);
      const containers = stdout.trim() ? stdout.trim().split('\n').length : 0;
      const rss = process.memoryUsage().rss / 1024 / 1024;
      console.log(
        `\n${many} hibernated sessions in ${fixed((performance.now() - started) / 1000, 0)} s: ${containers} containers left of them, ` +
          `checkpoints ${fixed(total / 1024 / 1024, 1)} MB in all (${fixed(total / many / 1024, 0)} KB each), ` +
          `this process (gateway + worker) ${fixed(rss, 0)} MB RSS`,
      );
      const sample = ids[Math.floor(ids.length / 2)]!;
      const back = await run(target.url, key, sample, 'print(state["n"])');
      console.log(`one of them resumed: ${back.body.stdout.trim()} in ${fixed(back.ms, 0)} ms (restore ${back.body.resumedMs} ms)`);
    }
  } finally {
    await deleteTenant(target, tenant.id);
    await target.close();
  }
}

runMain('bench:hibernate', main);
