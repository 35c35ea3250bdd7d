// bench/batch: batch throughput and item latency, against `docker run --rm` per item at
// the same concurrency, in the same run.
//
//   npm run build && npm run bench:batch -- [options]
//
// Two workloads: trivial items (`print(i)`) and a small pandas computation. For each,
// Drydock runs one batch (POST /v1/batches, then the batch is followed until done) and
// the baseline runs `docker run --rm <sandbox image> python3 -c <code>` for a sample of
// the same items, `--concurrency` at a time. Every item must succeed with the expected
// output, or the bench stops. By default a gateway and a worker are booted in this
// process (WORKER_BATCH_CONCURRENCY = --concurrency); `--url` benches a running
// deployment (its workers' batch slots are theirs).
import { execFile } from 'node:child_process';
import { writeFileSync } from 'node:fs';
import { cpus } from 'node:os';
import { parseArgs } from 'node:util';
import { api, BenchError, createTenant, fixed, openTarget, summarize, table, TARGET_ARGS, type Summary } from '../lib/harness.js';

const USAGE = `usage: npm run bench:batch -- [options]
  --items <n>         trivial items (print(i))                 (default 1000)
  --pandas <n>        pandas items                             (default 200)
  --concurrency <n>   items at once, Drydock and baseline       (default 4)
  --docker-n <n>      baseline items per workload (a sample)    (default 40)
  --url <url>         bench this running gateway instead of one in this process
  --admin-key <key>   its admin key (else DRYDOCK_ADMIN_KEY)
  --json <file>       also write the figures as JSON`;

const PANDAS = (i: number) =>
  `import pandas as pd\ndf = pd.DataFrame({"a": range(${1000 + i}), "b": range(${1000 + i})})\nprint(int((df.a * df.b).sum() % 1000003))`;
const pandasExpected = (i: number) => {
  const n = BigInt(1000 + i);
  return `${((n - 1n) * n * (2n * n - 1n) / 6n) % 1000003n}\n`;
};

interface Workload {
  name: string;
  code: (i: number) => string;
  expected: (i: number) => string;
  n: number;
}

interface Figures {
  workload: string;
  items: number;
  drydock: { seconds: number; perSecond: number; run: Summary; endToEnd: Summary };
  docker: { items: number; seconds: number; perSecond: number; run: Summary };
  ratio: number;
}

async function main() {
  const { values } = parseArgs({
    options: {
      items: { type: 'string' },
      pandas: { type: 'string' },
      concurrency: { type: 'string' },
      'docker-n': { type: 'string' },
      ...TARGET_ARGS,
      json: { type: 'string' },
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) {
    console.log(USAGE);
    return;
  }
  const count = (name: string, raw: string | undefined, def: number, min: number) => {
    const n = raw === undefined ? def : Number(raw);
    if (!Number.isInteger(n) || n < min) throw new BenchError(`--${name} must be a whole number >= ${min} (got ${raw})`);
    return n;
  };
  const items = count('items', values.items, 1000, 0);
  const pandas = count('pandas', values.pandas, 200, 0);
  const concurrency = count('concurrency', values.concurrency, 4, 1);
  const dockerN = count('docker-n', values['docker-n'], 40, 1);
  const image = process.env.SANDBOX_IMAGE ?? 'drydock/sandbox:latest';

  const platform = await openTarget({ url: values.url, adminKey: values['admin-key'] }, { WORKER_BATCH_CONCURRENCY: String(concurrency) });
  const workloads: Workload[] = [
    { name: 'print(i)', code: (i: number) => `print(${i})`, expected: (i: number) => `${i}\n`, n: items },
    { name: 'pandas', code: PANDAS, expected: pandasExpected, n: pandas },
  ].filter((w) => w.n > 0);

  console.log('bench/batch: items per second and item latency, Drydock batch vs docker run --rm per item');
  console.log(`  platform    ${platform.mode}`);
  console.log(`  image       ${image}`);
  console.log(`  concurrency ${concurrency} items at once (Drydock batch and baseline)`);
  console.log(`  host        node ${process.version}, ${cpus().length} CPUs\n`);

  const results: Figures[] = [];
  try {
    const { apiKey: key } = await createTenant(platform, { name: `bench-batch-${Date.now().toString(36)}`, limits: { batchConcurrency: concurrency } });
    for (const workload of workloads) {
      // A short warm-up batch: image layers and the first container cost once.
      await runBatch(platform.url, key, workload, Math.min(concurrency, workload.n), concurrency);
      const drydock = await runBatch(platform.url, key, workload, workload.n, concurrency);
      const docker = await runDocker(image, workload, Math.min(dockerN, workload.n), concurrency);
      results.push({ workload: workload.name, items: workload.n, drydock, docker, ratio: drydock.perSecond / docker.perSecond });
      console.log(`${workload.name}: ${workload.n} items, Drydock ${fixed(drydock.perSecond, 1)} items/s, docker run ${fixed(docker.perSecond, 2)} items/s`);
    }
  } finally {
    await platform.close();
  }

  console.log('\nItems per second (wall time from submit to the last item recorded; baseline: the sample of docker runs):');
  console.log(
    table(
      ['workload', 'items', 'drydock s', 'drydock items/s', 'docker run items', 'docker run s', 'docker run items/s', 'ratio'],
      results.map((r) => [
        r.workload,
        String(r.items),
        fixed(r.drydock.seconds),
        fixed(r.drydock.perSecond, 1),
        String(r.docker.items),
        fixed(r.docker.seconds),
        fixed(r.docker.perSecond, 2),
        `${fixed(r.ratio, 1)}x`,
      ]),
    ),
  );
  console.log('\nItem latency (ms): run = the item\'s start to its record; end to end = submit to its record; docker run = one `docker run --rm`:');
  const row = (label: string, s: Summary) => [label, String(s.n), fixed(s.min, 0), fixed(s.p50, 0), fixed(s.p99, 0), fixed(s.max, 0)];
  console.log(
    table(
      ['', 'n', 'min', 'p50', 'p99', 'max'],
      results.flatMap((r) => [
        row(`${r.workload} drydock run`, r.drydock.run),
        row(`${r.workload} drydock end to end`, r.drydock.endToEnd),
        row(`${r.workload} docker run`, r.docker.run),
      ]),
    ),
  );
  const trivial = results.find((r) => r.workload === 'print(i)');
  if (trivial) {
    const met = (ok: boolean) => (ok ? 'MET' : 'MISSED');
    console.log(
      `\ntargets (trivial items): >= 50 items/s: ${met(trivial.drydock.perSecond >= 50)} (${fixed(trivial.drydock.perSecond, 1)}); ` +
        `>= 10x docker run: ${met(trivial.ratio >= 10)} (${fixed(trivial.ratio, 1)}x)`,
    );
  }
  if (values.json) writeFileSync(values.json, JSON.stringify({ concurrency, image, results }, null, 2));
}

async function runBatch(url: string, key: string, workload: Workload, n: number, concurrency: number) {
  const items = Array.from({ length: n }, (_, i) => ({ code: workload.code(i), id: String(i) }));
  const started = performance.now();
  const submitted = await api(url, key, 'POST', '/v1/batches', { items, concurrency, timeoutMs: 60_000 });
  if (submitted.status !== 202) throw new BenchError(`submitting the batch failed: ${JSON.stringify(submitted.body)}`);
  const id = submitted.body.id as string;
  let batch: any;
  for (;;) {
    batch = (await api(url, key, 'GET', `/v1/batches/${id}`)).body;
    if (batch.status === 'completed') break;
    if (batch.status === 'cancelled') throw new BenchError(`batch ${id} was cancelled`);
    await new Promise((r) => setTimeout(r, 20));
  }
  const seconds = (performance.now() - started) / 1000;
  if (batch.counts.ok !== n) throw new BenchError(`batch ${id}: ${JSON.stringify(batch.counts)} (expected ${n} ok)`);
  const created = new Date(batch.createdAt).getTime();
  const run: number[] = [];
  const endToEnd: number[] = [];
  for (let offset = 0; offset < n; offset += 1000) {
    const page = (await api(url, key, 'GET', `/v1/batches/${id}/items?offset=${offset}&limit=1000`)).body.items;
    for (const item of page) {
      if (item.stdout !== workload.expected(item.index)) {
        throw new BenchError(`item ${item.index} printed ${JSON.stringify(item.stdout)}, expected ${JSON.stringify(workload.expected(item.index))}`);
      }
      const finished = new Date(item.finishedAt).getTime();
      run.push(finished - new Date(item.startedAt).getTime());
      endToEnd.push(finished - created);
    }
  }
  return { seconds, perSecond: n / seconds, run: summarize(run), endToEnd: summarize(endToEnd) };
}

async function runDocker(image: string, workload: Workload, n: number, concurrency: number) {
  const run: number[] = [];
  let next = 0;
  const started = performance.now();
  const lane = async () => {
    for (let i = next++; i < n; i = next++) {
      const t0 = performance.now();
      const stdout = await new Promise<string>((resolve, reject) =>
        execFile('docker', ['run', '--rm', '--network', 'none', image, 'python3', '-c', workload.code(i)], (error, out) =>
          error ? reject(new BenchError(`docker run failed: ${error.message}`)) : resolve(out),
        ),
      );
      run.push(performance.now() - t0);
      if (stdout !== workload.expected(i)) throw new BenchError(`docker run of item ${i} printed ${JSON.stringify(stdout)}`);
    }
  };
  await Promise.all(Array.from({ length: concurrency }, lane));
  const seconds = (performance.now() - started) / 1000;
  return { items: n, seconds, perSecond: n / seconds, run: summarize(run) };
}

main().catch((error) => {
  console.error(error instanceof BenchError ? `bench/batch: ${error.message}` : error);
  process.exitCode = 1;
});
