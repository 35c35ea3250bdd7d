// bench/commands: a trivial shell command (`true`) through POST /v1/sessions/:id/commands
// on a warm session, against a trivial Python execution (`pass`) on the same session and
// `docker exec <container> true` into the same container, in alternating rounds of the
// same run (issue 51's targets: commands p50 within 1.5x of executions', and at least
// 15x faster than docker exec).
//
//   npm run build && npm run bench:commands -- [--url http://127.0.0.1:8080] [options]
//
// Against the separate-process deployment: `bash scripts/start.sh --detach`, then
// --url. Without --url a gateway and a worker are booted in this process. The client is
// node:http with a keep-alive agent, one request at a time.
import { execFile } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { promisify } from 'node:util';
import {
  BenchError,
  containerOfSession,
  createSession,
  createTenant,
  deleteTenant,
  dockerVersion,
  fixed,
  openTarget,
  readArgs,
  runMain,
  summarize,
  summaryRow,
  SUMMARY_HEADERS,
  table,
  TARGET_ARGS,
  wholeNumber,
} from '../lib/harness.js';
import { machineProbeLine } from '../lib/machine-probe.js';

const execFileAsync = promisify(execFile);

const USAGE = `npm run bench:commands -- [options]
  --n <count>          timed runs of each Drydock case per round set (default 300)
  --docker-n <count>   timed docker exec runs                        (default 30)
  --warmup <count>     untimed runs of each Drydock case first       (default 500)
  --url <url>          bench a running gateway (the separate-process deployment)
  --admin-key <key>    its admin key (else DRYDOCK_ADMIN_KEY)`;

const TARGET_VS_EXECUTION = 1.5;
const TARGET_VS_DOCKER = 15;

// One POST over the keep-alive agent; resolves when the answer is 200 and `check` holds.
function post(agent: Agent, base: URL, key: string, path: string, body: string, check: (text: string) => boolean): Promise<void> {
  return new Promise<void>((resolve, reject) => {
    const req = httpRequest(
      {
        agent,
        host: base.hostname,
        port: base.port,
        method: 'POST',
        path,
        headers: { authorization: `Bearer ${key}`, 'content-type': 'application/json', 'content-length': Buffer.byteLength(body) },
      },
      (res) => {
        let text = '';
        res.setEncoding('utf8');
        res.on('data', (chunk: string) => (text += chunk));
        res.on('end', () => (res.statusCode === 200 && check(text) ? resolve() : reject(new BenchError(`POST ${path} answered ${res.statusCode}: ${text.slice(0, 300)}`))));
      },
    );
    req.on('error', reject);
    req.end(body);
  });
}

async function main(): Promise<void> {
  const args = readArgs({ n: { type: 'string' }, 'docker-n': { type: 'string' }, warmup: { type: 'string' }, ...TARGET_ARGS }, USAGE);
  const n = wholeNumber('--n', args.n, 300, 1);
  const dockerN = wholeNumber('--docker-n', args['docker-n'], 30, 1);
  const warmup = wholeNumber('--warmup', args.warmup, 500, 0);
  await dockerVersion('for the docker exec baseline');
  const target = await openTarget({ url: args.url, adminKey: args['admin-key'] });
  console.log(`commands: ${target.mode}; ${machineProbeLine()}`);
  const tenant = await createTenant(target, { name: `bench-commands-${Date.now()}` });
  const agent = new Agent({ keepAlive: true, maxSockets: 1 });
  try {
    const session = await createSession(target.url, tenant.apiKey, {});
    const base = new URL(target.url);
    const cases = {
      execution: () => post(agent, base, tenant.apiKey, `/v1/sessions/${session.id}/executions`, '{"code":"pass"}', (t) => t.includes('"status":"ok"')),
      command: () => post(agent, base, tenant.apiKey, `/v1/sessions/${session.id}/commands`, '{"argv":["true"]}', (t) => t.includes('"exitCode":0')),
    };
    for (let i = 0; i < warmup; i++) {
      await cases.execution();
      await cases.command();
    }
    const times = { execution: [] as number[], command: [] as number[] };
    // Alternating blocks of ten, so a slow spell of the machine falls on both cases.
    for (let done = 0; done < n; done += 10) {
      const order = (done / 10) % 2 === 0 ? (['execution', 'command'] as const) : (['command', 'execution'] as const);
      for (const name of order) {
        for (let i = 0; i < Math.min(10, n - done); i++) {
          const started = performance.now();
          await cases[name]();
          times[name].push(performance.now() - started);
        }
      }
    }
    const container = await containerOfSession(target.url, target.adminKey, session.id);
    const docker: number[] = [];
    for (let i = 0; i < dockerN + 3; i++) {
      const started = performance.now();
      await execFileAsync('docker', ['exec', '-u', '10001:10001', container, 'true']);
      if (i >= 3) docker.push(performance.now() - started);
    }
    const s = { execution: summarize(times.execution), command: summarize(times.command), docker: summarize(docker) };
    console.log(
      table(SUMMARY_HEADERS, [
        summaryRow('POST /executions `pass`', s.execution),
        summaryRow('POST /commands `true`', s.command),
        summaryRow('docker exec `true`', s.docker),
      ]),
    );
    const vsExecution = s.command.p50 / s.execution.p50;
    const vsDocker = s.docker.p50 / s.command.p50;
    console.log(
      table(
        ['ratio (p50)', 'value', 'target', 'met'],
        [
          ['command / execution', `${fixed(vsExecution)}x`, `<= ${TARGET_VS_EXECUTION}x`, vsExecution <= TARGET_VS_EXECUTION ? 'yes' : 'no'],
          ['docker exec / command', `${fixed(vsDocker, 1)}x`, `>= ${TARGET_VS_DOCKER}x`, vsDocker >= TARGET_VS_DOCKER ? 'yes' : 'no'],
        ],
      ),
    );
  } finally {
    agent.destroy();
    await deleteTenant(target, tenant.id);
    await target.close();
  }
}

runMain('commands', main);
