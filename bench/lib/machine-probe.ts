// How contended this machine's memory is at the moment a bench ran.
//
// On the shared 2-core VM the benches run on, the same build's figures move by half
// between quiet and busy spells while a CPU-only loop runs at the same speed at every
// hour: the spells are cache and memory contention from outside the VM (bench/README.md,
// agent, tenth sitting). A pointer chase over a random cycle of 64 MiB, one dependent
// memory access per step, reads that contention directly, so each bench that prints it
// says which kind of spell its figures come from.

import { readFileSync } from 'node:fs';
import { Worker } from 'node:worker_threads';

const WORDS = 16 * 1024 * 1024; // 64 MiB of Int32
const STEPS = 1_000_000;
const ROUNDS = 3;

// Nanoseconds per random access, the median of three rounds (about 1 s in all).
export function memoryLatencyNs(): number {
  const next = new Int32Array(WORDS);
  for (let i = 0; i < WORDS; i++) next[i] = i;
  // Sattolo's shuffle: one cycle through every word, so no step is cached by a short loop.
  let seed = 12345;
  for (let i = WORDS - 1; i > 0; i--) {
    seed = (seed * 1103515245 + 12345) & 0x7fffffff;
    const k = seed % i;
    const t = next[i]!;
    next[i] = next[k]!;
    next[k] = t;
  }
  const rounds: number[] = [];
  let at = 0;
  for (let r = 0; r < ROUNDS; r++) {
    const started = process.hrtime.bigint();
    for (let i = 0; i < STEPS; i++) at = next[at]!;
    rounds.push(Number(process.hrtime.bigint() - started) / STEPS);
  }
  if (at < 0) throw new Error('unreachable');
  return rounds.sort((a, b) => a - b)[1]!;
}

// Microseconds for one thread to wake another and be woken back (a futex wait and
// notify each way, through Atomics), the median of three rounds. The platform's requests
// are chains of such wakeups between processes (client, gateway, Redis, worker, sandbox,
// PostgreSQL); on this VM their cost moved when the pointer chase did not: the
// twenty-second sitting, slow on every bench (`docker exec` 95-103 ms against 72-79),
// read 143-198 ns there, as quiet spells do (bench/README.md).
const WAKEUP_WARMUP = 1_000;
const WAKEUP_TRIPS = 5_000;

export function wakeupRoundTripUs(): number {
  const flag = new Int32Array(new SharedArrayBuffer(4));
  // The other side: waits for 1, answers 0; 2 ends it.
  const echo = new Worker(
    `const { workerData } = require('node:worker_threads');
     const flag = new Int32Array(workerData);
     for (;;) {
       Atomics.wait(flag, 0, 0);
       if (Atomics.load(flag, 0) === 2) break;
       Atomics.store(flag, 0, 0);
       Atomics.notify(flag, 0);
     }`,
    { eval: true, workerData: flag.buffer },
  );
  echo.unref();
  const trip = () => {
    Atomics.store(flag, 0, 1);
    Atomics.notify(flag, 0);
    while (Atomics.load(flag, 0) === 1) Atomics.wait(flag, 0, 1);
  };
  try {
    for (let i = 0; i < WAKEUP_WARMUP; i++) trip();
    const rounds: number[] = [];
    for (let r = 0; r < ROUNDS; r++) {
      const started = process.hrtime.bigint();
      for (let i = 0; i < WAKEUP_TRIPS; i++) trip();
      rounds.push(Number(process.hrtime.bigint() - started) / WAKEUP_TRIPS / 1000);
    }
    return rounds.sort((a, b) => a - b)[1]!;
  } finally {
    Atomics.store(flag, 0, 2);
    Atomics.notify(flag, 0);
  }
}

export function machineProbeLine(): string {
  return (
    `machine: ${memoryLatencyNs().toFixed(0)} ns per random memory access (64 MiB pointer chase), ` +
    `${wakeupRoundTripUs().toFixed(1)} µs per wakeup round trip between two threads (lower is quieter)`
  );
}

// What the machine's CPUs did over a stretch of a bench, from the first line of
// /proc/stat: the shares of their time spent busy, idle, and stolen ("steal": time the
// hypervisor ran something else on a vCPU that had work). With steal the machine had
// less than its cores; a process's own CPU time may then include the stolen time too.
// Null where /proc/stat cannot be read.
export function hostCpuMeter(): () => string | null {
  const read = (): number[] | null => {
    try {
      const first = readFileSync('/proc/stat', 'utf8').split('\n', 1)[0]!;
      const fields = first.trim().split(/\s+/).slice(1).map(Number);
      return fields.length >= 8 && fields.every(Number.isFinite) ? fields : null;
    } catch {
      return null;
    }
  };
  const before = read();
  return () => {
    const after = read();
    if (!before || !after) return null;
    // user nice system idle iowait irq softirq steal (guest time is inside user and nice)
    const d = after.slice(0, 8).map((value, i) => value - before[i]!);
    const [user, nice, system, idle, iowait, irq, softirq, steal] = d as [number, number, number, number, number, number, number, number];
    const total = d.reduce((sum, x) => sum + x, 0);
    if (total <= 0) return null;
    const pct = (x: number) => `${((100 * x) / total).toFixed(1)} %`;
    return `host CPUs over it (/proc/stat): ${pct(user + nice + system + irq + softirq)} busy, ${pct(steal)} stolen by the hypervisor, ${pct(idle + iowait)} idle`;
  };
}
