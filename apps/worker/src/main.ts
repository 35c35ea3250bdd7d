import { pino } from 'pino';
import { APP_CONFIG, logDestination, logFatalErrors, pinoOptions, startupFailure, type AppConfig } from '@drydock/core';
import { composeReplicaIdFromEngine } from '@drydock/docker-sandbox';
import { createWorker } from './bootstrap.js';

try {
  // A Compose replica without WORKER_ID gets a stable one (worker-<n>), not its random
  // container id (docs/operations.md, Replicas).
  if (!process.env.WORKER_ID) {
    const replica = await composeReplicaIdFromEngine(process.env.DOCKER_SOCKET);
    if (replica) process.env.WORKER_ID = replica;
  }
  const app = await createWorker();
  // From here an error nothing caught is a fatal log line before the process stops.
  logFatalErrors(pino(pinoOptions(app.get<AppConfig>(APP_CONFIG), 'worker'), logDestination()));
} catch (error) {
  const failure = startupFailure('worker', error);
  if (failure === null) throw error;
  console.error(failure);
  process.exit(1);
}
