import type { Worker } from 'bullmq';
import { withTimeout } from '@drydock/core';

// How long closing waits for a blocking connection that is reconnecting; redisOptions
// retries at least every second.
const RECONNECT_WAIT_MS = 3_000;

// Closes a BullMQ Worker and says whether it closed within `withinMs` (with `force`,
// jobs still running are not waited for).
//
// Worker.close() waits for its blocking connection to end, and ioredis never ends a
// connection closed while it waits to reconnect: disconnect() cancels the retry and no
// 'end' follows. An idle worker closed shortly after a Redis restart, before its
// blocking connection was back, would stay closing for ever and keep the process alive.
// So the close first waits (bounded) for that connection to be back.
export async function closeQueueWorker(worker: Worker, withinMs: number, force = false): Promise<boolean> {
  const blocking = await worker.getBackend().blockingClient;
  if (blocking && (blocking.status === 'reconnecting' || blocking.status === 'connecting' || blocking.status === 'connect')) {
    const back = new Promise<void>((resolve) => {
      blocking.once('ready', resolve);
      blocking.once('end', resolve);
    });
    await withTimeout(back, RECONNECT_WAIT_MS, undefined);
  }
  return withTimeout(worker.close(force).then(() => true), withinMs, false);
}

// A worker stopping: jobs still running are not waited for, and its connections get a
// few seconds to close.
export function stopQueueWorker(worker: Worker): Promise<boolean> {
  return closeQueueWorker(worker, 5_000, true);
}
