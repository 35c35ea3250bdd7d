// A slow machine on demand: takes a share of one CPU's time away from everything else,
// the way a busy hypervisor takes a VM's vCPUs (steal). bench/targets.sh --take-cpu
// starts one per core, pinned to it (taskset) and at the highest priority (nice -20), so
// that the platform's processes get only what is left, in the same rhythm of short
// outages a VM sees.
//
// Every period it spins for `percent` of the period, then sleeps for the rest. The spin
// reads the clock and does nothing else: no memory traffic, so it takes CPU time only
// (cache and memory contention, the other thing that makes the reference machine slow
// on some days, is not emulated).
//
//   node dist/bench/lib/cpu-taker.js --percent 25 [--period-ms 10]
import { BenchError, readArgs, runMain, wholeNumber } from './harness.js';

const USAGE = `Usage: node dist/bench/lib/cpu-taker.js --percent P [--period-ms N]

  --percent <p>     share of each period spent spinning, 1-90
  --period-ms <n>   length of a period (default 10): a VM's vCPU is taken away in
                    outages of a few milliseconds`;

runMain('cpu-taker', async () => {
  const values = readArgs({ percent: { type: 'string' }, 'period-ms': { type: 'string' } } as const, USAGE);
  if (values.percent === undefined) throw new BenchError(`--percent is required\n\n${USAGE}`);
  const percent = wholeNumber('--percent', values.percent, 0, 1);
  if (percent > 90) throw new BenchError('--percent must be at most 90: the machine must keep some CPU for the platform');
  const periodMs = wholeNumber('--period-ms', values['period-ms'], 10, 1);
  const spinMs = (periodMs * percent) / 100;
  let next = performance.now();
  let stopped = false;
  const stop = () => (stopped = true);
  process.once('SIGTERM', stop);
  process.once('SIGINT', stop);
  while (!stopped) {
    const start = performance.now();
    while (performance.now() - start < spinMs) {
      /* spin */
    }
    next += periodMs;
    const rest = next - performance.now();
    if (rest > 0) await new Promise((resolve) => setTimeout(resolve, rest));
    else next = performance.now();
  }
});
