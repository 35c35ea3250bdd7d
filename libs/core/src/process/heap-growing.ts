import { setFlagsFromString } from 'node:v8';
import { ConfigError } from '../config/app-config.js';

// How far V8 lets the old generation grow past what survived the last full collection
// before it starts the next one, as a percentage (V8's `--heap-growing-percent`): with
// 100, a full collection starts once the old generation is twice what survived.
//
// V8's own factor (the flag at 0) follows how fast the program has lately been
// allocating, and a gateway or a worker is idle between bursts of bulk work. An idle
// process gets a small factor: its next burst starts with the limit 8–10 MB over the live
// heap, and V8 starts marking for a full collection whenever less than a young
// generation's worth (32 MB here) is left below the limit, so each full collection starts
// the next. Measured (docs/operations.md, "Memory"): a worker left idle a minute ran 25
// full collections per bench/artifacts run instead of none (in its main heap) and
// ingested 100 MB in 200–250 ms instead of 120–150; the gateway ran 19 instead of 5
// through bench/vfs. With a factor of 2 the room left is the live heap itself (about 40
// MB in a worker, 80 in a gateway), so a burst runs as on a fresh process; and the factor
// no longer reaches the 4 V8 allows a process that allocates fast (a gateway read 330–370
// MB RSS after agent turns with it).
export const DEFAULT_HEAP_GROWING_PERCENT = 100;
export const HEAP_GROWING_PERCENT_ENV = 'DRYDOCK_HEAP_GROWING_PERCENT';
const FLAG = /^--heap[-_]growing[-_]percent(=|$)/;

// What a process runs with: `percent` null leaves V8's own factor.
export interface HeapGrowing {
  percent: number | null;
  source: 'default' | 'setting' | 'command line';
}

export function heapGrowingPolicy(env: NodeJS.ProcessEnv = process.env, execArgv: readonly string[] = process.execArgv): HeapGrowing {
  // The flag on node's command line (GATEWAY_NODE_FLAGS, WORKER_NODE_FLAGS) already
  // holds, and wins.
  if (execArgv.some((arg) => FLAG.test(arg))) return { percent: null, source: 'command line' };
  const raw = env[HEAP_GROWING_PERCENT_ENV]?.trim();
  if (!raw) return { percent: DEFAULT_HEAP_GROWING_PERCENT, source: 'default' };
  if (!/^\d{1,4}$/.test(raw) || Number(raw) > 1000) {
    throw new ConfigError(
      `${HEAP_GROWING_PERCENT_ENV} must be a whole number from 0 to 1000 (0 leaves V8's own heap growing), got "${raw}".`,
    );
  }
  const percent = Number(raw);
  return { percent: percent === 0 ? null : percent, source: 'setting' };
}

// Applies the policy to this process. V8 reads the flag each time it sets the limit after
// a collection, so setting it while the process runs takes effect from the next one.
export function applyHeapGrowingPolicy(
  env: NodeJS.ProcessEnv = process.env,
  execArgv: readonly string[] = process.execArgv,
  setFlags: (flags: string) => void = setFlagsFromString,
): HeapGrowing {
  const policy = heapGrowingPolicy(env, execArgv);
  if (policy.percent !== null) setFlags(`--heap-growing-percent=${policy.percent}`);
  return policy;
}
