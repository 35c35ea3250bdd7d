// bench/commands: a trivial shell command (`true`) through POST /v1/sessions/:id/commands
// on a warm session, and a keystroke's echo in a terminal of it (GET .../pty, one byte
// typed into `cat`, the time until the terminal shows it), against a trivial Python
// execution (`pass`) on the same session and `docker exec <container> true` into the
// same container, in alternating rounds of the same run (issue 51's targets: commands
// p50 within 1.5x of executions', at least 15x faster than docker exec; the echo's p50
// under 2x an execution's).
//
//   npm run build && npm run bench:commands -- [--url http://127.0.0.1:8080] [options]
//
// Against the separate-process deployment: `bash scripts/start.sh --detach`, then
// --url. Without --url a gateway and a worker are booted in this process. The client is
// node:http with a keep-alive agent, one request at a time.
import { execFile } from 'node:child_process';
import { Agent, request as httpRequest } from 'node:http';
import { promisify } from 'node:util';
import WebSocket from 'ws';
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
const TARGET_ECHO_VS_EXECUTION = 2;

// A terminal of the session running `cat > /dev/null`: each keystroke is echoed by the
// pty's line discipline, so `type` measures the whole way there and back (gateway,
// Redis, worker, host channel, supervisor, pty) and nothing of the shell's.
async function openEchoTerminal(base: string, key: string, sessionId: string): Promise<{ keystroke: () => Promise<void>; close: () => void }> {
  const socket = new WebSocket(`${base.replace(/^http/, 'ws')}/v1/sessions/${sessionId}/pty?cols=200&rows=50`, { headers: { authorization: `Bearer ${key}` } });
  await new Promise<void>((resolve, reject) => {
    socket.once('open', () => resolve());
    socket.once('unexpected-response', (_req, res) => reject(new BenchError(`the terminal was refused: ${res.statusCode}`)));
    socket.once('error', reject);
  });
  let shown = '';
  let waiting: { needle: string; resolve: () => void } | null = null;
  socket.on('message', (data: Buffer, isBinary: boolean) => {
    if (!isBinary) return;
    shown += data.toString('latin1');
    if (waiting && shown.includes(waiting.needle)) {
      const { resolve } = waiting;
      waiting = null;
      shown = '';
      resolve();
    }
  });
  const until = (needle: string, send: () => void) =>
    new Promise<void>((resolve) => {
      waiting = { needle, resolve };
      send();
    });
  await until('cat-ready-7', () => socket.send(Buffer.from('echo cat-ready-$((3+4)); exec cat > /dev/null\r'), { binary: true }));
  let typed = 0;
  return {
    keystroke: async () => {
      // A new line now and then, so the line discipline's buffer stays small.
      if (++typed % 64 === 0) await until('\n', () => socket.send(Buffer.from('\r'), { binary: true }));
      await until('k', () => socket.send(Buffer.from('k'), { binary: true }));
    },
    close: () => socket.close(),
  };
}

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
  let closeTerminal = () => undefined as void;
  try {
    const session = await createSession(target.url, tenant.apiKey, {});
    const base = new URL(target.url);
    const terminal = await openEchoTerminal(target.url, tenant.apiKey, session.id);
    closeTerminal = terminal.close;
    const cases = {
      execution: () => post(agent, base, tenant.apiKey, `/v1/sessions/${session.id}/executions`, '{"code":"pass"}', (t) => t.includes('"status":"ok"')),
      command: () => post(agent, base, tenant.apiKey, `/v1/sessions/${session.id}/commands`, '{"argv":["true"]}', (t) => t.includes('"exitCode":0')),
      keystroke: terminal.keystroke,
    };
    for (let i = 0; i < warmup; i++) {
      await cases.execution();
      await cases.command();
      await cases.keystroke();
    }
    const times = { execution: [] as number[], command: [] as number[], keystroke: [] as number[] };
    // Alternating blocks of ten, so a slow spell of the machine falls on every case.
    const orders = [
      ['execution', 'command', 'keystroke'],
      ['keystroke', 'command', 'execution'],
    ] as const;
    for (let done = 0; done < n; done += 10) {
      const order = orders[(done / 10) % 2]!;
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
    const s = { execution: summarize(times.execution), command: summarize(times.command), keystroke: summarize(times.keystroke), docker: summarize(docker) };
    console.log(
      table(SUMMARY_HEADERS, [
        summaryRow('POST /executions `pass`', s.execution),
        summaryRow('POST /commands `true`', s.command),
        summaryRow('terminal keystroke echo', s.keystroke),
        summaryRow('docker exec `true`', s.docker),
      ]),
    );
    const vsExecution = s.command.p50 / s.execution.p50;
    const vsDocker = s.docker.p50 / s.command.p50;
    const echoVsExecution = s.keystroke.p50 / s.execution.p50;
    console.log(
      table(
        ['ratio (p50)', 'value', 'target', 'met'],
        [
          ['command / execution', `${fixed(vsExecution)}x`, `<= ${TARGET_VS_EXECUTION}x`, vsExecution <= TARGET_VS_EXECUTION ? 'yes' : 'no'],
          ['docker exec / command', `${fixed(vsDocker, 1)}x`, `>= ${TARGET_VS_DOCKER}x`, vsDocker >= TARGET_VS_DOCKER ? 'yes' : 'no'],
          ['keystroke echo / execution', `${fixed(echoVsExecution)}x`, `< ${TARGET_ECHO_VS_EXECUTION}x`, echoVsExecution < TARGET_ECHO_VS_EXECUTION ? 'yes' : 'no'],
        ],
      ),
    );
  } finally {
    closeTerminal();
    agent.destroy();
    await deleteTenant(target, tenant.id);
    await target.close();
  }
}

runMain('commands', main);
