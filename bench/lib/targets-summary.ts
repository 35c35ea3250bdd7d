// The last step of bench/targets.sh: reads the logs of its runs (var/targets/<time>/
// <bench>-<run>.log) and prints one line per issue 17 target with every run's figure and
// how many runs met it. The figures come from the verdict lines each bench prints, so a
// bench that changes its wording makes this say "not found" rather than guess.
//
//   node dist/bench/lib/targets-summary.js <logs folder> <runs>
import { readFileSync } from 'node:fs';
import { join } from 'node:path';

interface Target {
  what: string;
  bench: string;
  // The figure as printed (with its unit) and whether that run met the target.
  read(log: string): { figure: string; met: boolean } | null;
}

// The first match of `pattern`, whose groups `figure` and `verdict` (met or missed, in
// either case) are read.
function verdictLine(pattern: RegExp): Target['read'] {
  return (log) => {
    const groups = pattern.exec(log)?.groups;
    return groups ? { figure: groups.figure!.trim(), met: /^met$/i.test(groups.verdict!) } : null;
  };
}

const F = '(?<figure>[\\d.]+ ?(?:ms|s|x|/s)?)';
const V = '(?<verdict>met|missed)';
const line = (source: string, flags = 'im'): RegExp => new RegExp(source.replace('{F}', F).replace('{V}', V), flags);

const TARGETS: Target[] = [
  { what: 'warm print(1) p50 < 6 ms', bench: 'exec-latency', read: verdictLine(line(String.raw`drydock p50 < 6 ms: {V} \({F}\)`)) },
  { what: '>= 20x docker exec', bench: 'exec-latency', read: verdictLine(line(String.raw`>= 20x: {V} \({F}\)`)) },
  { what: '>= 500 executions/s (16 x 16)', bench: 'throughput', read: verdictLine(line(String.raw`target >= 500/s [^:]*: {V} \({F}\)`)) },
  { what: '10,000 files / 100 MB < 5 s', bench: 'vfs', read: verdictLine(line(String.raw`^bulk write of 10,000 files .*?\s{F}\s+< 5 s\s+{V}$`)) },
  { what: 'each 1,000-file batch <= 1.5x the first', bench: 'vfs', read: verdictLine(line(String.raw`^slowest 1,000-file batch / the first\s+{F}\s+≤ 1\.5x\s+{V}$`)) },
  { what: 'paged read through REST < 10 ms p50', bench: 'vfs', read: verdictLine(line(String.raw`^paged read through REST .*?\s{F}\s+< 10 ms\s+{V}$`)) },
  { what: 'grep returning 45,000 lines < 500 ms', bench: 'vfs', read: verdictLine(line(String.raw`^grep content returning .*?\s{F}\s+< 500 ms\s+{V}$`)) },
  { what: '100 MB artifact <= 1.2x docker cp', bench: 'artifacts', read: verdictLine(line(String.raw`ingest / docker cp = {F} \(target <= 1\.2x\): {V}`)) },
  { what: 'small artifacts < 3 ms each', bench: 'artifacts', read: verdictLine(line(String.raw`small \(derived\): {F} per artifact \(target < 3 ms\): {V}`)) },
  { what: 'agent overhead per tool call < 10 ms', bench: 'agent', read: verdictLine(line(String.raw`overhead per tool call p50: {F} \(target < 10 ms: {V}\)`)) },
  { what: 'gateway < 300 MB RSS, 50 sessions (MB)', bench: 'memory', read: verdictLine(line(String.raw`^gateway\s+[\d.]+\s+{F}\s+[\d.]+\s+[\d.-]+\s+{V}$`)) },
  { what: 'worker < 300 MB RSS, 50 sessions (MB)', bench: 'memory', read: verdictLine(line(String.raw`^worker\s+[\d.]+\s+{F}\s+[\d.]+\s+[\d.-]+\s+{V}$`)) },
];

function main(): void {
  const [folder, runsArg] = process.argv.slice(2);
  const runs = Number(runsArg);
  if (!folder || !Number.isInteger(runs) || runs < 1) {
    console.error('usage: node dist/bench/lib/targets-summary.js <logs folder> <runs>');
    process.exit(2);
  }
  const logs = new Map<string, string>();
  const log = (bench: string, run: number): string => {
    const name = `${bench}-${run}.log`;
    if (!logs.has(name)) {
      let text = '';
      try {
        text = readFileSync(join(folder, name), 'utf8');
      } catch {
        // a run that stopped early: its targets read "not found"
      }
      logs.set(name, text);
    }
    return logs.get(name)!;
  };

  const width = Math.max(...TARGETS.map((t) => t.what.length));
  // bench/targets.sh --take-cpu: the share of every core a higher-priority process took.
  let taken = 0;
  try {
    taken = Number(readFileSync(join(folder, 'take-cpu'), 'utf8').trim()) || 0;
  } catch {
    // a folder from before --take-cpu
  }
  const slowed = taken > 0 ? `, with ${taken} % of every core's time taken by a higher-priority process (--take-cpu)` : '';
  console.log(`\nissue 17's targets over ${runs} run${runs === 1 ? '' : 's'}${slowed} (logs: ${folder})\n`);
  // Which kind of minutes each run had: the machine probe and docker exec's own p50.
  for (let run = 1; run <= runs; run++) {
    const text = log('exec-latency', run);
    const probe = /^machine: ([\d.]+ ns) per random memory access/m.exec(text)?.[1] ?? 'not found';
    const dockerExec = /docker exec p50 ([\d.]+ ms)/.exec(text)?.[1] ?? 'not found';
    const throughput = log('throughput', run);
    const steal = /^load: host CPUs over it .*?([\d.]+ %) stolen/m.exec(throughput)?.[1] ?? 'not found';
    const cpu = /^CPU per execution [^:]*: (.*)$/m.exec(throughput)?.[1] ?? 'not found';
    console.log(
      `run ${run}: machine probe ${probe} per random memory access, docker exec p50 ${dockerExec} (lower is quieter); ` +
        `during the throughput load: CPU stolen by the hypervisor ${steal}, CPU per execution ${cpu}`,
    );
  }
  console.log('');
  let allMet = true;
  for (const target of TARGETS) {
    const readings = Array.from({ length: runs }, (_, i) => target.read(log(target.bench, i + 1).replace(/\x1b\[[0-9;]*m/g, '')));
    const met = readings.filter((r) => r?.met).length;
    if (met < runs) allMet = false;
    const figures = readings.map((r) => (r ? r.figure : 'not found')).join(', ');
    console.log(`${target.what.padEnd(width)}  ${met === runs ? '' : 'MISSED, '}met in ${met} of ${runs}: ${figures}`);
  }
  console.log(allMet ? '\nevery target met in every run' : '\nnot every target met in every run (figures above; full logs in the folder)');
}

main();
