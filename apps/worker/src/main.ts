import { PinoLogger } from 'nestjs-pino';
import { applyHeapGrowingPolicy, logFatalErrors, routeProcessWarnings, startupFailure } from '@drydock/core';
import { composeReplicaIdFromEngine } from '@drydock/docker-sandbox';
import { createWorker } from './bootstrap.js';

// Node's warnings become lines of the JSON log, not plain text beside them.
const warnings = routeProcessWarnings();
try {
  // V8's heap growing (DRYDOCK_HEAP_GROWING_PERCENT; docs/operations.md, "Memory").
  applyHeapGrowingPolicy();
  // A Compose replica without WORKER_ID gets a stable one (worker-<n>), not its random
  // container id (docs/operations.md, Replicas).
  if (!process.env.WORKER_ID) {
    const replica = await composeReplicaIdFromEngine(process.env.DOCKER_SOCKET);
    if (replica) process.env.WORKER_ID = replica;
  }
  await createWorker();
  // From here an error nothing caught is a fatal line of the app's logger (nestjs-pino's
  // root) before the process stops.
  logFatalErrors(PinoLogger.root);
  warnings.to(PinoLogger.root);
} catch (error) {
  warnings.release();
  const failure = startupFailure('worker', error);
  if (failure === null) throw error;
  console.error(failure);
  process.exit(1);
}
