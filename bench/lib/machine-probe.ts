// How contended this machine's memory is at the moment a bench ran.
//
// On the shared 2-core VM the benches run on, the same build's figures move by half
// between quiet and busy spells while a CPU-only loop runs at the same speed at every
// hour: the spells are cache and memory contention from outside the VM (bench/README.md,
// agent, tenth sitting). A pointer chase over a random cycle of 64 MiB, one dependent
// memory access per step, reads that contention directly, so each bench that prints it
// says which kind of spell its figures come from.

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

export function machineProbeLine(): string {
  return `machine: ${memoryLatencyNs().toFixed(0)} ns per random memory access (64 MiB pointer chase; lower is quieter)`;
}
