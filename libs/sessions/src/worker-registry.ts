// `draining`: finishing its runs before handing its sessions back; `drained`: holds
// nothing and takes nothing (it stays up until stopped). Only `active` workers get new
// sessions. Absent from workers older than drains: active.
export type WorkerState = 'active' | 'draining' | 'drained';

export interface WorkerInfo {
  id: string;
  state?: WorkerState;
  hostname: string;
  capacity: number;
  sessions: number;
  startedAt: string;
  lastSeenAt: string;
  dockerHealthy: boolean;
  // The warm pool (WORKER_POOL_SIZE): its size, sandboxes ready and starting; and each
  // template's pool ("name:version") that operators gave a size.
  pool?: { size: number; ready: number; starting: number; templates?: { template: string; size: number; ready: number; starting: number }[] };
}

// Live workers announce themselves with a heartbeat; an entry whose heartbeat lapsed
// is a dead worker.
export interface WorkerRegistry {
  heartbeat(info: WorkerInfo, ttlMs: number): Promise<void>;
  deregister(workerId: string): Promise<void>;
  listLive(): Promise<WorkerInfo[]>;
  isLive(workerId: string): Promise<boolean>;
  // An operator's request that a worker drain; the worker sees it with its next beat.
  requestDrain(workerId: string): Promise<void>;
  drainRequested(workerId: string): Promise<boolean>;
  clearDrainRequest(workerId: string): Promise<void>;
}

export const WORKER_REGISTRY = Symbol('WORKER_REGISTRY');

// Least-loaded live worker with room for one more session, or null.
export function pickWorker(workers: WorkerInfo[]): WorkerInfo | null {
  const candidates = workers.filter((w) => w.dockerHealthy && w.sessions < w.capacity && (w.state ?? 'active') === 'active');
  candidates.sort((a, b) => a.sessions / a.capacity - b.sessions / b.capacity || a.id.localeCompare(b.id));
  return candidates[0] ?? null;
}
