import type { FastifyReply } from 'fastify';
import type { ExecutionView, StreamEvent } from '@drydock/execution';
import { ErrorResponseFilter } from '../http/error-response.filter.js';
import { SseWriter } from './sse-writer.js';

// Answers one run (Python code or a command) as server-sent events: `stdout`/`stderr`
// ({text}) as they happen, then what `closing` adds (a code run's `result` and `error`),
// then `done` with the whole record. A failure before the first event is thrown, for
// an ordinary JSON error response; after it, it arrives as an `error` event.
export async function streamRun(
  reply: FastifyReply,
  run: (onOutput: (event: StreamEvent) => void) => Promise<ExecutionView>,
  closing: (view: ExecutionView, sse: SseWriter) => void = () => undefined,
): Promise<void> {
  const sse = new SseWriter(reply);
  try {
    const view = await run((event: StreamEvent) => sse.send(event.name, { text: event.text }));
    closing(view, sse);
    sse.send('done', view);
    sse.end();
  } catch (error) {
    if (!sse.started) throw error;
    sse.send('error', new ErrorResponseFilter().toResponse(error).body.error);
    sse.end();
  }
}
