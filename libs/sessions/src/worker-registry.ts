export interface WorkerInfo {
  id: string;
  hostname: string;
  capacity: number;
  sessions: number;
  startedAt: string;
  lastSeenAt: string;
  dockerHealthy: boolean;
}

// Live workers announce themselves with a heartbeat; an entry whose heartbeat lapsed
// is a dead worker.
export interface WorkerRegistry {
  heartbeat(info: WorkerInfo, ttlMs: number): Promise<void>;
  deregister(workerId: string): Promise<void>;
  listLive(): Promise<WorkerInfo[]>;
  isLive(workerId: string): Promise<boolean>;
}

export const WORKER_REGISTRY = Symbol('WORKER_REGISTRY');

// Least-loaded live worker with room for one more session, or null.
export function pickWorker(workers: WorkerInfo[]): WorkerInfo | null {
  const candidates = workers.filter((w) => w.dockerHealthy && w.sessions < w.capacity);
  candidates.sort((a, b) => a.sessions / a.capacity - b.sessions / b.capacity || a.id.localeCompare(b.id));
  return candidates[0] ?? null;
}
