// bench/client: what @drydock/client adds to a run. Interleaved samples of
// `session.run('pass')` through the SDK and of the same request made with a raw
// keep-alive fetch (the baseline), in one process against one session; the figure is
// the difference of the medians.
//
//   npm run build && npm run bench:client -- [--n 300] [--url http://127.0.0.1:8080 --admin-key …]
//
// By default a gateway and a worker are booted in this process; `--url` benches a
// running deployment (gateway and worker as separate processes).
import { parseArgs } from 'node:util';
import { Drydock } from '@drydock/client';
import { BenchError, createTenant, fixed, openTarget, summarize, table, TARGET_ARGS } from '../lib/harness.js';

const USAGE = `usage: npm run bench:client -- [options]
  --n <n>             samples of each kind                   (default 300)
  --url <url>         bench this running gateway instead of one in this process
  --admin-key <key>   its admin key (else DRYDOCK_ADMIN_KEY)`;

async function main() {
  const { values } = parseArgs({ options: { n: { type: 'string' }, ...TARGET_ARGS, help: { type: 'boolean', short: 'h' } } });
  if (values.help) return console.log(USAGE);
  const n = Number(values.n ?? 300);
  if (!Number.isInteger(n) || n < 1) throw new BenchError(`--n must be a positive whole number\n${USAGE}`);
  const platform = await openTarget({ url: values.url, adminKey: values['admin-key'] });
  try {
    const { apiKey: key } = await createTenant(platform, { name: `bench-client-${Date.now()}`, limits: { requestsPerMinute: 1_000_000 } });
    const client = new Drydock({ url: platform.url, apiKey: key });
    const session = await client.sessions.create({ threadId: 'bench-client' });
    const url = `${platform.url}/v1/sessions/${session.id}/executions`;
    const raw = async () => {
      const res = await fetch(url, { method: 'POST', headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json' }, body: JSON.stringify({ code: 'pass' }) });
      const body = (await res.json()) as { status: string };
      if (body.status !== 'ok') throw new BenchError(`raw run: ${JSON.stringify(body)}`);
    };
    const sdk = async () => {
      const run = await session.run('pass');
      if (run.status !== 'ok') throw new BenchError(`sdk run: ${JSON.stringify(run)}`);
    };
    for (let i = 0; i < 30; i++) await (i % 2 ? raw() : sdk()); // warm-up: connections, JIT
    const samples = { raw: [] as number[], sdk: [] as number[] };
    for (let i = 0; i < n; i++) {
      for (const [name, call] of i % 2 ? ([['raw', raw], ['sdk', sdk]] as const) : ([['sdk', sdk], ['raw', raw]] as const)) {
        const started = performance.now();
        await call();
        samples[name].push(performance.now() - started);
      }
    }
    const [r, s] = [summarize(samples.raw), summarize(samples.sdk)];
    console.log(`bench/client: ${platform.mode}; ${n} interleaved samples each of run('pass')`);
    console.log(table(['call', 'p50 ms', 'p99 ms', 'mean ms'], [
      ['raw keep-alive fetch (baseline)', fixed(r.p50), fixed(r.p99), fixed(r.mean)],
      ['@drydock/client session.run', fixed(s.p50), fixed(s.p99), fixed(s.mean)],
    ]));
    console.log(`SDK overhead at p50: ${fixed(s.p50 - r.p50, 3)} ms (ratio ${fixed(s.p50 / r.p50, 3)}×; target < 0.3 ms)`);
    await session.delete();
  } finally {
    await platform.close();
  }
}

main().catch((error) => {
  console.error(error instanceof BenchError ? error.message : error);
  process.exit(1);
});
