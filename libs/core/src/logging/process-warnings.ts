// Node's own warnings (the process's 'warning' events: MaxListenersExceededWarning,
// DeprecationWarning, ExperimentalWarning...) are printed by Node on stderr as plain text,
// into the same file as the app's JSON lines. Here they become `warn` lines of the app's
// logger instead, with the warning's name, code and stack: Node's printer is taken off
// and a listener of ours logs each one. Warnings emitted before the logger exists (while
// the app is being created) wait for it; a process that then fails to start gets Node's
// printer back and them printed by it, next to its one-line startup failure.
export interface WarningLogger {
  warn(details: { warning: { name: string; message: string; code?: string; stack?: string } }, message: string): void;
}

type WarningListener = (warning: Error) => void;
export type WarningProcess = {
  on(event: 'warning', listener: WarningListener): unknown;
  off(event: 'warning', listener: WarningListener): unknown;
  listeners(event: 'warning'): Function[];
};

export interface ProcessWarnings {
  // Logs the warnings so far and every one after through `logger`.
  to(logger: WarningLogger): void;
  // Gives the warnings back to Node's printer (the app did not start).
  release(): void;
}

export function routeProcessWarnings(proc: WarningProcess = process as unknown as WarningProcess): ProcessWarnings {
  // Called first thing in main: the listeners there are Node's (its printer, absent
  // under --no-warnings or NODE_NO_WARNINGS=1).
  const printers = proc.listeners('warning') as WarningListener[];
  for (const printer of printers) proc.off('warning', printer);
  const waiting: Error[] = [];
  let logger: WarningLogger | null = null;
  const log = (warning: Error) => {
    const { name, message, stack } = warning;
    const code = (warning as { code?: unknown }).code;
    logger!.warn({ warning: { name, message, ...(typeof code === 'string' ? { code } : {}), stack } }, `${name}: ${message}`);
  };
  const listener: WarningListener = (warning) => (logger ? log(warning) : waiting.push(warning));
  proc.on('warning', listener);
  return {
    to(target) {
      logger = target;
      for (const warning of waiting.splice(0)) log(warning);
    },
    release() {
      proc.off('warning', listener);
      for (const printer of printers) {
        proc.on('warning', printer);
        for (const warning of waiting) printer(warning);
      }
      waiting.length = 0;
    },
  };
}
