import { DrydockError } from './errors.js';
import { serverSentEvents } from './streams.js';

// The callbacks of a streamed run (Python code or a command).
export interface OutputCallbacks {
  // Called with each chunk of output as it is printed.
  onStdout?: (text: string) => void;
  onStderr?: (text: string) => void;
}

export const wantsStream = (callbacks: OutputCallbacks): boolean => Boolean(callbacks.onStdout || callbacks.onStderr);

// Follows a run's event stream (`stdout`/`stderr` {text} as they happen, then `done` with
// the record) and resolves to the record. A platform failure after the stream began
// arrives as `error` {code, message} and is thrown as a DrydockError; a Python exception
// also arrives as `error` ({name, value, traceback}) and is part of `done`.
export async function followRun<T>(stream: ReadableStream<Uint8Array>, callbacks: OutputCallbacks, what: string): Promise<T> {
  let failure: DrydockError | undefined;
  for await (const { event, data } of serverSentEvents(stream)) {
    const payload = JSON.parse(data) as Record<string, unknown>;
    if (event === 'stdout') callbacks.onStdout?.(String(payload.text));
    else if (event === 'stderr') callbacks.onStderr?.(String(payload.text));
    else if (event === 'done') return payload as T;
    else if (event === 'error' && typeof payload.code === 'string') {
      failure = new DrydockError(payload.code, String(payload.message), 0, payload.details as Record<string, unknown> | undefined);
    }
  }
  throw failure ?? new DrydockError('INVALID_RESPONSE', `The ${what} stream ended before its result.`, 200);
}
