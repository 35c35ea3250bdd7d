import type { DoneFrame, RichResult } from '../protocol/repl-protocol.js';

// Limits applied to one session's container, after clamping to the tenant's maxima.
export interface EffectiveLimits {
  memoryMb: number;
  cpus: number;
  timeoutMs: number;
  pids: number;
  sessionDiskMb: number;
  tmpDiskMb: number;
  maxOutputBytes: number;
}

export interface SandboxSpec {
  sessionId: string;
  tenantId: string;
  threadId: string;
  workerId: string;
  limits: EffectiveLimits;
}

export interface RunRequest {
  id: string;
  code: string;
  timeoutMs: number;
  maxOutputBytes: number;
}

// What one run produced: the REPL's done frame without its envelope. `stateLost` says
// the interpreter's variables were lost before this run started.
export type RunOutcome = Omit<DoneFrame, 'ev' | 'id'>;

export type OutputListener = (name: 'stdout' | 'stderr', text: string) => void;

// One live sandbox (container + REPL). Runs are serialised by the caller.
export interface Sandbox {
  readonly id: string;
  readonly alive: boolean;
  run(request: RunRequest, onOutput?: OutputListener): Promise<RunOutcome>;
  destroy(): Promise<void>;
}

export interface SandboxRuntime {
  create(spec: SandboxSpec): Promise<Sandbox>;
  // Removes containers labelled for this worker whose session is not in `keep`.
  removeOrphans(workerId: string, keep: ReadonlySet<string>): Promise<number>;
  healthy(): Promise<boolean>;
}

export const SANDBOX_RUNTIME = Symbol('SANDBOX_RUNTIME');

export function outcomeFromDone(done: DoneFrame): RunOutcome {
  return {
    status: done.status,
    stdout: done.stdout,
    stderr: done.stderr,
    truncated: done.truncated,
    result: compactResult(done.result),
    error: done.error,
    stateLost: done.stateLost,
    durationMs: done.durationMs,
  };
}

// The REPL reports absent representations as null; the API omits them.
function compactResult(result: RichResult | null): RichResult | null {
  if (!result) return null;
  const compact: RichResult = {};
  for (const [key, value] of Object.entries(result)) {
    if (value !== null && value !== undefined) (compact as Record<string, unknown>)[key] = value;
  }
  return Object.keys(compact).length ? compact : null;
}
