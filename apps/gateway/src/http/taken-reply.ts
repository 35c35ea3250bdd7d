import type { ServerResponse } from 'node:http';

// What a handler that writes its own bytes (server-sent events, a long-poll's
// keep-alive, NDJSON) needs of Fastify's reply: Node's response, and a way to tell
// Fastify that the handler answers by itself (FastifyReply.hijack), called when the
// first bytes go. Until then a failure is still answered by ErrorResponseFilter as a
// JSON error.
export interface TakenReply {
  readonly raw: ServerResponse;
  hijack(): unknown;
}
