// An error nothing caught, or a promise rejection nothing handled (Node 20 raises it as
// one, origin `unhandledRejection`), ends the process as Node's default does (status 1),
// but first as a JSON log line at level `fatal` with the error's stack and the ids of
// the request or job at hand, where the operator's log search finds it; by default
// Node printed a bare stack on stderr. pino's exit hook then writes the lines still
// buffered (pino-options.ts). The process is not kept alive: after such an error its
// state is unknown (Node's own guidance), and restarts and failover are designed for a
// worker or gateway that stops (docs/operations.md).
export interface FatalLogger {
  fatal(details: { err: unknown; origin: string }, message: string): void;
}

type ProcessLike = {
  on(event: 'uncaughtException', listener: (error: unknown, origin: string) => void): unknown;
  exit(code: number): never;
};

export function logFatalErrors(logger: FatalLogger, proc: ProcessLike = process as unknown as ProcessLike): void {
  proc.on('uncaughtException', (error, origin) => {
    try {
      const what = origin === 'unhandledRejection' ? 'a promise rejection nothing handled' : 'an error nothing caught';
      logger.fatal({ err: error, origin }, `${what}: the process stops`);
    } finally {
      proc.exit(1);
    }
  });
}
