// Artifact ingestion benchmark (issue 4): one execution leaves a 100 MB file in
// /session/artifacts/, another leaves 1,000 small ones; the worker's ingestion (archive
// API stream out of the container, SHA-256 and size cap while streaming, blob store
// write + rename, PostgreSQL record, outbox cleanup) is timed in-process around
// ArtifactIngester.ingest. The baseline is `docker cp` of a file of the same size out
// of the same container to this host's disk, in the same run.
//
// Targets: large file within 1.5x of docker cp; under 5 ms per small artifact.
//
//   npm run build && npm run bench:artifacts -- [--mb 100] [--small 1000] [--rounds 3]
import { execFile } from 'node:child_process';
import { mkdtemp, rm } from 'node:fs/promises';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { parseArgs, promisify } from 'node:util';
import { ArtifactIngester } from '@drydock/session-host';
import { api, BenchError, containerOfSession, fixed, startInProcess, summarize, table, timeMethod } from '../lib/harness.js';

const execFileAsync = promisify(execFile);
const TARGET_RATIO = 1.5;
const TARGET_SMALL_MS = 5;
const SMALL_BYTES = 1024;

const USAGE = `Usage: node dist/bench/artifacts/run.js [--mb N] [--small N] [--rounds N]

  --mb <n>       size of the large artifact in MiB          (BENCH_MB, default 100)
  --small <n>    number of small (~1 KiB) artifacts          (BENCH_SMALL, default 1000)
  --rounds <n>   repetitions of each measurement             (BENCH_ROUNDS, default 3)

Boots a gateway and a worker in this process (DATABASE_URL, REDIS_URL: the local dev
services by default) and needs the docker CLI for the baseline.`;

function options() {
  const { values } = parseArgs({
    options: { mb: { type: 'string' }, small: { type: 'string' }, rounds: { type: 'string' }, help: { type: 'boolean', short: 'h' } },
  });
  if (values.help) {
    console.log(USAGE);
    process.exit(0);
  }
  const int = (name: string, raw: string | undefined, def: number) => {
    const value = raw === undefined || raw === '' ? def : Number(raw);
    if (!Number.isInteger(value) || value < 1) throw new BenchError(`${name} must be a whole number >= 1 (got "${raw}")\n\n${USAGE}`);
    return value;
  };
  const env = process.env;
  return {
    mb: int('--mb', values.mb ?? env.BENCH_MB, 100),
    small: int('--small', values.small ?? env.BENCH_SMALL, 1000),
    rounds: int('--rounds', values.rounds ?? env.BENCH_ROUNDS, 3),
  };
}

const writeLarge = (path: string, mb: number) =>
  `import os\nos.makedirs(os.path.dirname(${JSON.stringify(path)}), exist_ok=True)\n` +
  `with open(${JSON.stringify(path)}, 'wb') as f:\n    for _ in range(${mb}): f.write(os.urandom(1 << 20))`;

const writeSmall = (count: number) =>
  `import os\nos.makedirs('/session/artifacts', exist_ok=True)\n` +
  `for i in range(${count}): open(f'/session/artifacts/s{i:05d}.bin', 'wb').write(os.urandom(${SMALL_BYTES}))`;

async function docker(...args: string[]): Promise<string> {
  try {
    return (await execFileAsync('docker', args, { encoding: 'utf8', maxBuffer: 16 * 1024 * 1024 })).stdout.trim();
  } catch (error) {
    throw new BenchError(`docker ${args[0]} failed: ${(error as Error).message.trim()}`);
  }
}

async function main(): Promise<void> {
  const opts = options();
  let ingestMs: number[] = [];
  timeMethod(ArtifactIngester.prototype, 'ingest', (ms) => ingestMs.push(ms));
  // Room for the large file twice (artifact + baseline copy) in the session's tmpfs,
  // whose pages count against the container's memory.
  const diskMb = String(Math.max(256, opts.mb * 2 + 64));
  const platform = await startInProcess({
    SANDBOX_SESSION_DISK_MB: diskMb,
    SANDBOX_MEMORY_MB: String(Math.max(512, opts.mb * 2 + 256)),
    ARTIFACTS_MAX_FILE_BYTES: String(Math.max(512, opts.mb + 1) * 1024 * 1024),
  });
  const scratch = await mkdtemp(join(tmpdir(), 'drydock-bench-cp-'));
  try {
    const tenant = await api(platform.url, platform.adminKey, 'POST', '/admin/tenants', { name: 'bench-artifacts' });
    if (tenant.status !== 201) throw new BenchError(`creating a tenant failed: ${JSON.stringify(tenant.body)}`);
    const key: string = tenant.body.apiKey;
    const session = await api(platform.url, key, 'POST', '/v1/sessions', { threadId: `bench-artifacts-${Date.now()}` });
    if (session.status !== 201) throw new BenchError(`creating a session failed: ${JSON.stringify(session.body)}`);
    const sessionId: string = session.body.id;
    const container = await containerOfSession(platform.url, platform.adminKey, sessionId);
    const run = async (code: string, expectArtifacts: number) => {
      ingestMs = [];
      const res = await api(platform.url, key, 'POST', `/v1/sessions/${sessionId}/executions`, { code, timeoutMs: 600_000 });
      if (res.status !== 200 || res.body.status !== 'ok') throw new BenchError(`execution failed: ${JSON.stringify(res.body).slice(0, 500)}`);
      if (res.body.artifacts.length !== expectArtifacts) {
        throw new BenchError(`expected ${expectArtifacts} artifacts, got ${res.body.artifacts.length} (skipped: ${JSON.stringify(res.body.artifactsSkipped)})`);
      }
      if (ingestMs.length !== 1) throw new BenchError(`ArtifactIngester.ingest ran ${ingestMs.length} times for one execution`);
      return ingestMs[0]!;
    };

    const large: number[] = [];
    const cp: number[] = [];
    const small: number[] = [];
    for (let round = 0; round < opts.rounds; round++) {
      large.push(await run(writeLarge('/session/artifacts/big.bin', opts.mb), 1));
      // The baseline: a file of the same size in the same volume, copied out by the CLI.
      await docker('exec', '-u', '10001:10001', container, 'python3', '-c', writeLarge('/session/cp-big.bin', opts.mb));
      const started = performance.now();
      await docker('cp', `${container}:/session/cp-big.bin`, join(scratch, 'big.bin'));
      cp.push(performance.now() - started);
      await docker('exec', '-u', '10001:10001', container, 'rm', '-f', '/session/cp-big.bin');
      await rm(join(scratch, 'big.bin'), { force: true });
      small.push(await run(writeSmall(opts.small), opts.small));
    }

    const bytes = opts.mb * 1024 * 1024;
    const L = summarize(large);
    const C = summarize(cp);
    const S = summarize(small);
    const mbps = (ms: number) => fixed(bytes / 1024 / 1024 / (ms / 1000), 1);
    console.log(`\nartifact ingestion, ${opts.rounds} rounds (times in ms; MB = MiB)\n`);
    console.log(
      table(
        ['measure', 'min', 'p50', 'max', 'MB/s at p50'],
        [
          [`ingest ${opts.mb} MB artifact`, fixed(L.min, 1), fixed(L.p50, 1), fixed(L.max, 1), mbps(L.p50)],
          [`docker cp ${opts.mb} MB (baseline)`, fixed(C.min, 1), fixed(C.p50, 1), fixed(C.max, 1), mbps(C.p50)],
          [`ingest ${opts.small} x ${SMALL_BYTES} B artifacts`, fixed(S.min, 1), fixed(S.p50, 1), fixed(S.max, 1), '-'],
        ],
      ),
    );
    const ratio = L.p50 / C.p50;
    const perSmall = S.p50 / opts.small;
    console.log(`\nlarge: ingest / docker cp = ${fixed(ratio)}x (target <= ${TARGET_RATIO}x): ${ratio <= TARGET_RATIO ? 'met' : 'MISSED'}`);
    console.log(`small: ${fixed(perSmall, 3)} ms per artifact (target < ${TARGET_SMALL_MS} ms): ${perSmall < TARGET_SMALL_MS ? 'met' : 'MISSED'}`);
  } finally {
    await rm(scratch, { recursive: true, force: true });
    await platform.close();
  }
}

main().catch((error: Error) => {
  console.error(error instanceof BenchError ? `bench/artifacts: ${error.message}` : error);
  process.exit(1);
});
