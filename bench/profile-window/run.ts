// A CPU profile of a running gateway or worker over a window of its life, without
// restarting it: the process's inspector is opened with SIGUSR1 (Node's own signal for
// it; it listens on 127.0.0.1:9229), V8's sampling profiler runs for --seconds, the
// profile is written (open it in Chrome's DevTools or speedscope) and summarized: busy
// time, self time per package and the functions with the most self time. The inspector
// is closed again at the end.
//
// Unlike `node --cpu-prof`, which profiles a process from its start, this leaves out the
// boot and any warm-up: start a bench, let it warm up, then take the window from its
// measured part (bench/README.md, agent).
//
//   npm run build
//   npm run bench:profile-window -- [--pid N (default: var/run/gateway.pid)] [--seconds 6] [--interval-us 200] [--out FILE] [--top 30]
//
// A measuring tool: the inspector port is reachable by anyone on the host while it is
// open, so it is for a bench deployment, not a production one.
import { readFileSync, mkdirSync, writeFileSync } from 'node:fs';
import { dirname, join } from 'node:path';
import { BenchError, fixed, readArgs, runMain, table, wholeNumber } from '../lib/harness.js';

const INSPECTOR = 'http://127.0.0.1:9229';

const USAGE = `usage: npm run bench:profile-window -- [options]
  --pid <n>            the process to profile (default: the pid in var/run/gateway.pid)
  --seconds <n>        how long to sample                               (default 6)
  --interval-us <n>    sampling interval in microseconds                (default 200)
  --out <file>         where the .cpuprofile goes (default var/profiles/<pid>-<time>.cpuprofile)
  --top <n>            rows of each summary table                       (default 30)`;

interface ProfileNode {
  id: number;
  callFrame: { functionName: string; url: string; lineNumber: number };
  children?: number[];
}
interface Profile {
  nodes: ProfileNode[];
  samples: number[];
  timeDeltas: number[];
}

async function main(): Promise<void> {
  const values = readArgs(
    { pid: { type: 'string' }, seconds: { type: 'string' }, 'interval-us': { type: 'string' }, out: { type: 'string' }, top: { type: 'string' } },
    USAGE,
  );
  const pid = values.pid ? wholeNumber('--pid', values.pid, 0, 1) : gatewayPid();
  const seconds = wholeNumber('--seconds', values.seconds, 6, 1);
  const intervalUs = wholeNumber('--interval-us', values['interval-us'], 200, 50);
  const top = wholeNumber('--top', values.top, 30, 1);
  const out = values.out ?? join('var/profiles', `${pid}-${new Date().toISOString().replace(/[:.]/g, '-')}.cpuprofile`);
  if (typeof WebSocket === 'undefined') throw new BenchError('this needs a WebSocket client: run it with node --experimental-websocket (the npm script does)');

  try {
    process.kill(pid, 'SIGUSR1');
  } catch (error) {
    throw new BenchError(`cannot signal process ${pid}: ${(error as NodeJS.ErrnoException).code === 'ESRCH' ? 'no such process' : (error as Error).message}`);
  }
  const inspector = await openInspector(pid);
  try {
    await inspector.call('Profiler.enable');
    await inspector.call('Profiler.setSamplingInterval', { interval: intervalUs });
    await inspector.call('Profiler.start');
    console.log(`profiling process ${pid} for ${seconds} s (every ${intervalUs} µs)`);
    await new Promise((resolve) => setTimeout(resolve, seconds * 1000));
    const { profile } = (await inspector.call('Profiler.stop')) as { profile: Profile };
    await inspector.call('Profiler.disable');
    mkdirSync(dirname(out), { recursive: true });
    writeFileSync(out, JSON.stringify(profile));
    console.log(`wrote ${out}\n`);
    summarize(profile, top);
  } finally {
    // Closed from inside the process (inspector.close() is process._debugEnd), once this
    // connection is gone: closing waits for the connections to end.
    const closing = (await inspector
      .call('Runtime.evaluate', { expression: "setTimeout(() => process._debugEnd(), 200).unref(), 'closing'" })
      .catch(() => undefined)) as { result?: { value?: unknown } } | undefined;
    inspector.close();
    if (closing?.result?.value !== 'closing') {
      console.error(`note: could not close the inspector of process ${pid}; it listens on 127.0.0.1:9229 until the process ends`);
    }
  }
}

// The gateway scripts/start.sh started.
function gatewayPid(): number {
  try {
    return Number(readFileSync('var/run/gateway.pid', 'utf8').trim());
  } catch {
    throw new BenchError('no var/run/gateway.pid (is a deployment from scripts/start.sh running?): name the process with --pid');
  }
}

async function openInspector(pid: number) {
  let target: { webSocketDebuggerUrl: string } | undefined;
  for (let attempt = 0; attempt < 50 && !target; attempt++) {
    target = await fetch(`${INSPECTOR}/json/list`)
      .then((res) => res.json() as Promise<{ webSocketDebuggerUrl: string }[]>)
      .then((list) => list[0])
      .catch(() => undefined);
    if (!target) await new Promise((resolve) => setTimeout(resolve, 100));
  }
  if (!target) throw new BenchError(`process ${pid} opened no inspector on ${INSPECTOR} (is it a node process of this user?)`);
  const socket = new WebSocket(target.webSocketDebuggerUrl);
  await new Promise((resolve, reject) => {
    socket.addEventListener('open', resolve, { once: true });
    socket.addEventListener('error', () => reject(new BenchError(`cannot connect to ${target.webSocketDebuggerUrl}`)), { once: true });
  });
  let lastId = 0;
  const pending = new Map<number, { resolve: (value: unknown) => void; reject: (error: Error) => void }>();
  socket.addEventListener('message', (event) => {
    const message = JSON.parse(String(event.data)) as { id?: number; result?: unknown; error?: { message: string } };
    const waiter = message.id === undefined ? undefined : pending.get(message.id);
    if (!waiter) return;
    pending.delete(message.id!);
    if (message.error) waiter.reject(new BenchError(message.error.message));
    else waiter.resolve(message.result);
  });
  return {
    call(method: string, params: object = {}): Promise<unknown> {
      const id = ++lastId;
      socket.send(JSON.stringify({ id, method, params }));
      return new Promise((resolve, reject) => pending.set(id, { resolve, reject }));
    },
    close: () => socket.close(),
  };
}

// Self time per package (node_modules package, Drydock's app or lib, node's own module)
// and per function.
function summarize(profile: Profile, top: number): void {
  const byId = new Map(profile.nodes.map((node) => [node.id, node]));
  const selfUs = new Map<number, number>();
  for (let i = 0; i < profile.samples.length; i++) {
    selfUs.set(profile.samples[i]!, (selfUs.get(profile.samples[i]!) ?? 0) + (profile.timeDeltas[i + 1] ?? 0));
  }
  const byPackage = new Map<string, number>();
  const byFunction = new Map<string, number>();
  let total = 0;
  let idle = 0;
  for (const [id, us] of selfUs) {
    const { functionName, url, lineNumber } = byId.get(id)!.callFrame;
    total += us;
    if (functionName === '(idle)') {
      idle += us;
      continue;
    }
    const where = functionName.startsWith('(') && !url ? functionName : packageOf(url);
    byPackage.set(where, (byPackage.get(where) ?? 0) + us);
    const name = `${functionName || '(anonymous)'}  ${packageOf(url)}:${lineNumber + 1}`;
    byFunction.set(name, (byFunction.get(name) ?? 0) + us);
  }
  const busy = total - idle;
  console.log(`sampled ${(total / 1000).toFixed(0)} ms, busy ${(busy / 1000).toFixed(0)} ms (${((busy / total) * 100).toFixed(1)} %)`);
  const rows = (map: Map<string, number>) =>
    [...map]
      .sort((a, b) => b[1] - a[1])
      .slice(0, top)
      .map(([name, us]) => [name, fixed(us / 1000, 1), fixed((us / busy) * 100, 1)]);
  console.log(`\n${table(['self time by package', 'ms', '% busy'], rows(byPackage))}`);
  console.log(`\n${table(['functions with the most self time', 'ms', '% busy'], rows(byFunction))}`);
}

function packageOf(url: string): string {
  if (!url) return '(native)';
  const module = /node_modules\/((?:@[^/]+\/)?[^/]+)/.exec(url);
  if (module) return module[1]!;
  const ours = /\/dist\/((?:apps|libs)\/[^/]+)\//.exec(url);
  if (ours) return `drydock ${ours[1]}`;
  return url.replace(/^file:\/\//, '');
}

runMain('profile-window', main);
