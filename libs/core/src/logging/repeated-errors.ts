import type { LoggerService } from '@nestjs/common';

// A listener for the `error` events of a Redis client or BullMQ queue/worker. While a
// connection is down they emit one per reconnect attempt, up to ten a second; this logs
// the first, then at most one a minute with how many it held back, so an outage reads
// as a few lines and the log is not flooded.
export function repeatedErrorLogger(
  logger: Pick<LoggerService, 'warn'>,
  label: string,
  intervalMs = 60_000,
  now: () => number = Date.now,
): (error: Error) => void {
  let lastAt = -Infinity;
  let held = 0;
  return (error: Error) => {
    const at = now();
    if (at - lastAt < intervalMs) {
      held++;
      return;
    }
    logger.warn(`${label}: ${error.message}${held ? ` (and ${held} more errors since the last report)` : ''}`);
    lastAt = at;
    held = 0;
  };
}
