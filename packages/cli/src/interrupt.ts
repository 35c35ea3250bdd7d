import type { Session } from '@drydock/client';
import { CliError, ExitCode } from './exit-codes.js';
import type { Io } from './io.js';

// Ctrl-C while a run or a command is in flight, as in a local terminal: the first one
// interrupts what runs in the session (Python gets a KeyboardInterrupt, a command's
// process group SIGINT), whose record then says how it ended; a second one stops waiting
// (the interrupt is on its way regardless) and exits 130.
export async function interruptible<T>(
  session: Session,
  io: Io,
  what: string,
  wait: (signal: AbortSignal) => Promise<T>,
): Promise<{ value: T; interrupted: boolean }> {
  const stopWaiting = new AbortController();
  let interrupted = false;
  const onSigint = () => {
    if (interrupted) return stopWaiting.abort();
    interrupted = true;
    io.stderr.write(`drydock: interrupting the ${what} (Ctrl-C again to stop waiting)\n`);
    session.interrupt().catch((error: Error) => io.stderr.write(`drydock: the interrupt failed: ${error.message}\n`));
  };
  process.on('SIGINT', onSigint);
  try {
    const value = await wait(stopWaiting.signal);
    return { value, interrupted };
  } catch (error) {
    if (!stopWaiting.signal.aborted) throw error;
    throw new CliError(ExitCode.Interrupted, 'INTERRUPTED', `Stopped waiting for the ${what} in session ${session.id}.`);
  } finally {
    process.removeListener('SIGINT', onSigint);
  }
}
