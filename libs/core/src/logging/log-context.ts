import { AsyncLocalStorage } from 'node:async_hooks';

// Ids every log line of one request or job carries (JSON logs, pino's mixin): the
// request id the gateway gave an HTTP request (X-Request-Id), carried in the job to the
// worker, and the tenant, session, execution or batch it concerns.
export interface LogContext {
  requestId?: string;
  tenantId?: string;
  sessionId?: string;
  executionId?: string;
  batchId?: string;
}

const storage = new AsyncLocalStorage<LogContext>();

// Runs `fn` with its own context (a request, a job): what it and everything it awaits
// logs carries these ids.
export function runWithLogContext<T>(context: LogContext, fn: () => T): T {
  return storage.run({ ...context }, fn);
}

export function logContext(): LogContext | undefined {
  return storage.getStore();
}

// Adds ids learnt along the way (the tenant once authenticated, the execution once
// recorded) to the current context; nothing outside one.
export function addToLogContext(fields: LogContext): void {
  const store = storage.getStore();
  if (!store) return;
  for (const [key, value] of Object.entries(fields)) if (value !== undefined) (store as Record<string, string>)[key] = value;
}
