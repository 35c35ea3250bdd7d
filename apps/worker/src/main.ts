import { ConfigError } from '@drydock/core';
import { composeReplicaIdFromEngine } from '@drydock/docker-sandbox';
import { createWorker } from './bootstrap.js';

try {
  // A Compose replica without WORKER_ID gets a stable one (worker-<n>), not its random
  // container id (docs/operations.md, Replicas).
  if (!process.env.WORKER_ID) {
    const replica = await composeReplicaIdFromEngine(process.env.DOCKER_SOCKET);
    if (replica) process.env.WORKER_ID = replica;
  }
  await createWorker();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}
