import { ConfigError } from '../config/app-config.js';
import { outageOf } from './service-unavailable.js';

// What a process that could not start tells its operator, in one line, for the
// failures an operator fixes (bad configuration, PostgreSQL or Redis unreachable);
// null for anything else, which is a bug and keeps its stack.
export function startupFailure(processName: 'gateway' | 'worker', error: unknown, env: NodeJS.ProcessEnv = process.env): string | null {
  if (error instanceof ConfigError) return error.message;
  const outage = outageOf(error);
  if (!outage) return null;
  const [variable, what] = outage === 'redis' ? ['REDIS_URL', 'Redis'] : ['DATABASE_URL', 'PostgreSQL'];
  const url = env[variable];
  return (
    `The ${processName} could not start: ${what} did not answer (${(error as Error).message}). ` +
    `Check that it is running and that ${variable}${url ? ` (${withoutPassword(url)})` : ''} points at it.`
  );
}

function withoutPassword(url: string): string {
  try {
    const parsed = new URL(url);
    if (parsed.password) parsed.password = '***';
    if (parsed.searchParams.has('password')) parsed.searchParams.set('password', '***');
    return parsed.toString();
  } catch {
    return '(unparseable)';
  }
}
