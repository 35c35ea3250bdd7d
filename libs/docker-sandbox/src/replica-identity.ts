import { existsSync } from 'node:fs';
import { hostname } from 'node:os';
import Docker from 'dockerode';

type Inspect = (containerId: string) => Promise<{ Config?: { Labels?: Record<string, string> | null } }>;

// A worker replica's stable id under Docker Compose (`docker compose up --scale worker=N`),
// when WORKER_ID is not set: `<service>-<replica number>` from the labels Compose puts on
// the worker's own container (its hostname is the container's short id). A replica
// recreated by Compose keeps its number, so it comes back under the same id and clears
// what its previous container left. Null outside a container, or outside Compose.
export async function composeReplicaId(inspect: Inspect, inContainer = existsSync('/.dockerenv')): Promise<string | null> {
  if (!inContainer) return null;
  try {
    const labels = (await inspect(hostname())).Config?.Labels ?? {};
    const service = labels['com.docker.compose.service'];
    const number = labels['com.docker.compose.container-number'];
    if (!service || !number) return null;
    const id = `${service}-${number}`.replace(/[^A-Za-z0-9_.-]/g, '-').slice(0, 64);
    return id;
  } catch {
    return null;
  }
}

// The same, asking the Docker engine at `socketPath` (the worker has its socket).
export function composeReplicaIdFromEngine(socketPath = '/var/run/docker.sock'): Promise<string | null> {
  const docker = new Docker({ socketPath });
  return composeReplicaId((id) => docker.getContainer(id).inspect());
}
