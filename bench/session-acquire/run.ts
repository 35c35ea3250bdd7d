// bench/session-acquire: how long POST /v1/sessions takes with the warm pool, against a
// cold start (a session whose limits the pool does not serve) and `docker run` of the
// sandbox image, in the same run.
//
//   npm run build && npm run bench:session-acquire -- [options]
//
// Each sample creates a session on a new thread, runs `print(1)` in it, and deletes it.
// Warm samples use the default limits, so the worker hands them a pooled sandbox; before
// each one the bench waits until the worker's pool is full again (GET /admin/workers),
// as it is when sessions arrive slower than the pool refills. Cold samples ask for
// other memory, so the worker starts a container as it does without a pool. The
// baseline is `docker run --rm --network none <sandbox image> python3 -c 'print(1)'`.
// By default a gateway and a worker (WORKER_POOL_SIZE 2) are booted in this process;
// `--url` benches a running deployment.
import { execFile } from 'node:child_process';
import { parseArgs } from 'node:util';
import { api, BenchError, createTenant, fixed, openTarget, summarize, table, TARGET_ARGS, type Summary } from '../lib/harness.js';

const USAGE = `usage: npm run bench:session-acquire -- [options]
  --n <n>             samples of each kind                   (default 30)
  --url <url>         bench this running gateway instead of one in this process
  --admin-key <key>   its admin key (else DRYDOCK_ADMIN_KEY)`;

type Call = (method: string, path: string, body?: unknown) => Promise<{ status: number; body: any }>;

async function main() {
  const { values } = parseArgs({
    options: {
      n: { type: 'string' },
      ...TARGET_ARGS,
      help: { type: 'boolean', short: 'h' },
    },
  });
  if (values.help) return console.log(USAGE);
  const n = Number(values.n ?? 30);
  if (!Number.isInteger(n) || n < 1) throw new BenchError(`--n must be a positive whole number\n${USAGE}`);
  const platform = await openTarget({ url: values.url, adminKey: values['admin-key'] }, { WORKER_POOL_SIZE: process.env.WORKER_POOL_SIZE ?? '2' });
  try {
    const admin: Call = (method, path, body) => api(platform.url, platform.adminKey, method, path, body);
    const tenant = await createTenant(platform, { name: `bench-session-acquire-${Date.now()}` });
    const call: Call = (method, path, body) => api(platform.url, tenant.apiKey, method, path, body);
    const workers = (await admin('GET', '/admin/workers')).body.workers as { id: string; pool?: { size: number } }[];
    const poolSize = Math.max(0, ...workers.map((w) => w.pool?.size ?? 0));
    console.log(`bench/session-acquire: ${platform.mode}; ${workers.length} worker(s), WORKER_POOL_SIZE ${poolSize}; ${n} samples each`);
    if (poolSize === 0) console.log('  (no worker has a pool: "warm" samples start cold too)');

    const poolFull = async () => {
      const deadline = Date.now() + 30_000;
      while (Date.now() < deadline) {
        const live = (await admin('GET', '/admin/workers')).body.workers as { pool?: { size: number; ready: number } }[];
        if (live.every((w) => !w.pool || w.pool.ready >= w.pool.size)) return;
        await new Promise((r) => setTimeout(r, 50));
      }
      throw new BenchError('the warm pool did not refill within 30 s');
    };
    const sample = async (kind: string, i: number, limits?: Record<string, number>) => {
      const started = performance.now();
      const created = await call('POST', '/v1/sessions', { threadId: `bench-${kind}-${Date.now()}-${i}`, ...(limits ? { limits } : {}) });
      const createMs = performance.now() - started;
      if (created.status !== 201) throw new BenchError(`POST /v1/sessions answered ${created.status}: ${JSON.stringify(created.body)}`);
      const run = await call('POST', `/v1/sessions/${created.body.id}/executions`, { code: 'print(1)' });
      const readyMs = performance.now() - started;
      if (run.body?.stdout !== '1\n') throw new BenchError(`print(1) answered ${JSON.stringify(run.body)}`);
      await call('DELETE', `/v1/sessions/${created.body.id}`);
      return { createMs, readyMs };
    };

    const warm = { create: [] as number[], ready: [] as number[] };
    const cold = { create: [] as number[], ready: [] as number[] };
    const docker: number[] = [];
    const image = process.env.SANDBOX_IMAGE ?? 'drydock/sandbox:latest';
    // Interleaved, so drift on the machine touches every kind alike.
    for (let i = 0; i < n; i++) {
      await poolFull();
      const w = await sample('warm', i);
      warm.create.push(w.createMs);
      warm.ready.push(w.readyMs);
      const c = await sample('cold', i, { memoryMb: 320 });
      cold.create.push(c.createMs);
      cold.ready.push(c.readyMs);
      docker.push(await dockerRun(image));
    }

    const s = { warmCreate: summarize(warm.create), warmReady: summarize(warm.ready), coldCreate: summarize(cold.create), coldReady: summarize(cold.ready), docker: summarize(docker) };
    const row = (name: string, x: Summary) => [name, fixed(x.p50), fixed(x.p90), fixed(x.p99), fixed(x.mean)];
    console.log('\nSession start (ms): create = POST /v1/sessions answered; + print(1) = until its first execution answered');
    console.log(
      table(
        ['', 'p50', 'p90', 'p99', 'mean'],
        [
          row('warm pool: create', s.warmCreate),
          row('warm pool: create + print(1)', s.warmReady),
          row('cold: create', s.coldCreate),
          row('cold: create + print(1)', s.coldReady),
          row('docker run --rm python3 -c print(1)', s.docker),
        ],
      ),
    );
    console.log(
      `\np50 ratios: cold / warm create ${fixed(s.coldCreate.p50 / s.warmCreate.p50, 1)}x; ` +
        `docker run / warm create + print(1) ${fixed(s.docker.p50 / s.warmReady.p50, 1)}x`,
    );
  } finally {
    await platform.close();
  }
}

function dockerRun(image: string): Promise<number> {
  const started = performance.now();
  return new Promise((resolve, reject) =>
    execFile('docker', ['run', '--rm', '--network', 'none', image, 'python3', '-c', 'print(1)'], (error) =>
      error ? reject(new BenchError(`docker run failed: ${error.message}`)) : resolve(performance.now() - started),
    ),
  );
}

main().catch((error) => {
  console.error(error instanceof BenchError ? `bench/session-acquire: ${error.message}` : error);
  process.exit(1);
});
