// bench/http-adapter: what Nest's HTTP layer costs per request on Express (what the
// gateway runs on) and on Fastify (@nestjs/platform-fastify), for a route shaped like
// the gateway's execution route, nothing behind it. Each adapter serves from its own
// process (server.ts); `--rounds` alternating runs of `--seconds` each (express, fastify,
// fastify, express, ...), 16 keep-alive clients posting from this process. Reported:
// requests per second and the server's CPU per request (process.cpuUsage()), and the
// ratio between the two adapters.
//
//   npm run build && npm run bench:http-adapter -- [--seconds 5] [--rounds 2] [--clients 16]
import { spawn, type ChildProcess } from 'node:child_process';
import { Agent, request } from 'node:http';
import { fileURLToPath } from 'node:url';
import { BenchError, fixed, readArgs, runMain, summarize, table, wholeNumber } from '../lib/harness.js';

const USAGE = `Usage: node dist/bench/http-adapter/run.js [--seconds N] [--rounds N] [--clients N]

  --seconds <n>  load per run            (default 5)
  --rounds <n>   ABBA rounds (each: express, fastify, fastify, express; default 1)
  --clients <n>  concurrent clients      (default 16)`;

type Adapter = 'express' | 'fastify';
const PORT = 18_411;
const SERVER = fileURLToPath(new URL('./server.js', import.meta.url));

async function serve(adapter: Adapter): Promise<ChildProcess> {
  const child = spawn(process.execPath, [SERVER, adapter, String(PORT)], { stdio: ['ignore', 'pipe', 'inherit'] });
  await new Promise<void>((resolve, reject) => {
    child.once('exit', (code) => reject(new BenchError(`the ${adapter} server exited (${code})`)));
    child.stdout!.on('data', (chunk: Buffer) => chunk.toString().includes('ready') && resolve());
  });
  return child;
}

async function stop(child: ChildProcess): Promise<void> {
  child.removeAllListeners('exit');
  const exited = new Promise((resolve) => child.once('exit', resolve));
  child.kill('SIGTERM');
  await exited;
}

function call(agent: Agent, method: string, path: string, body?: string): Promise<string> {
  return new Promise((resolve, reject) => {
    const headers = body === undefined ? {} : { 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) };
    const req = request({ agent, host: '127.0.0.1', port: PORT, method, path, headers }, (res) => {
      let text = '';
      res.setEncoding('utf8');
      res.on('data', (chunk: string) => (text += chunk));
      res.on('end', () => (res.statusCode === 200 ? resolve(text) : reject(new BenchError(`${method} ${path} answered ${res.statusCode}: ${text}`))));
    });
    req.on('error', reject);
    req.end(body);
  });
}

async function cpuMs(agent: Agent): Promise<number> {
  const usage = JSON.parse(await call(agent, 'GET', '/cpu')) as { user: number; system: number };
  return (usage.user + usage.system) / 1000;
}

async function measure(adapter: Adapter, seconds: number, clients: number): Promise<{ perSecond: number; cpuPerRequest: number }> {
  const server = await serve(adapter);
  const agent = new Agent({ keepAlive: true, maxSockets: clients });
  try {
    const body = JSON.stringify({ code: 'print(1)' });
    const post = () => call(agent, 'POST', '/v1/sessions/ses_0123456789abcdefghij/executions', body);
    for (let i = 0; i < 200; i++) await post();
    const before = await cpuMs(agent);
    const end = performance.now() + seconds * 1000;
    let count = 0;
    await Promise.all(
      Array.from({ length: clients }, async () => {
        while (performance.now() < end) {
          await post();
          count++;
        }
      }),
    );
    const used = (await cpuMs(agent)) - before;
    return { perSecond: count / seconds, cpuPerRequest: used / count };
  } finally {
    agent.destroy();
    await stop(server);
  }
}

async function main() {
  const values = readArgs({ seconds: { type: 'string' }, rounds: { type: 'string' }, clients: { type: 'string' } }, USAGE);
  const seconds = wholeNumber('--seconds', values.seconds, 5, 1);
  const rounds = wholeNumber('--rounds', values.rounds, 1, 1);
  const clients = wholeNumber('--clients', values.clients, 16, 1);
  const runs: Record<Adapter, { perSecond: number; cpuPerRequest: number }[]> = { express: [], fastify: [] };
  for (let round = 0; round < rounds; round++) {
    for (const adapter of ['express', 'fastify', 'fastify', 'express'] as const) runs[adapter].push(await measure(adapter, seconds, clients));
  }
  const rows = (['express', 'fastify'] as const).map((adapter) => {
    const cpu = summarize(runs[adapter].map((r) => r.cpuPerRequest));
    const rate = summarize(runs[adapter].map((r) => r.perSecond));
    return [adapter, String(cpu.n), fixed(cpu.p50, 3), fixed(cpu.min, 3), fixed(cpu.max, 3), fixed(rate.p50, 0)];
  });
  console.log(`Nest ${'POST /v1/sessions/:id/executions'}-shaped route, ValidationPipe, ${clients} keep-alive clients, ${seconds} s per run\n`);
  console.log(table(['adapter', 'runs', 'server CPU ms/request p50', 'min', 'max', 'requests/s p50'], rows));
  const ratio = summarize(runs.express.map((r) => r.cpuPerRequest)).p50 / summarize(runs.fastify.map((r) => r.cpuPerRequest)).p50;
  console.log(`\nexpress / fastify, server CPU per request at p50: ${fixed(ratio)}x`);
}

runMain('bench/http-adapter', main);
