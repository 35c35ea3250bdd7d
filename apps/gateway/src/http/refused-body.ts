import type { IncomingMessage } from 'node:http';
import type { FastifyInstance } from 'fastify';

// How much of a refused request's body is read (and dropped) before the answer, and for
// how long at most.
export const REFUSED_BODY_DRAIN = { maxBytes: 64 * 1024 * 1024, maxMs: 10_000 };

// A request answered with an error before its body was read to the end (over a limit, a
// bad archive, a refused NDJSON line, a missing key): the rest of the body is read and
// dropped, up to REFUSED_BODY_DRAIN, before the answer is sent. A client that sends its
// whole body before it reads anything (Python's http.client, so `requests`) otherwise
// never sees the answer: the connection is closed, or stops being read, while it is still
// sending, and it gets BrokenPipeError. Past the bounds the answer goes with
// `Connection: close`, and what is left is not read.
export function drainRefusedBodies(instance: FastifyInstance, bounds = REFUSED_BODY_DRAIN): void {
  // Callback style: every answer passes here, and the usual one (a success, or a body
  // read whole) goes on at once, without a promise.
  instance.addHook('onSend', (request, reply, payload, done) => {
    if (reply.statusCode < 400 || request.raw.complete) return done(null, payload);
    void drainBody(request.raw, bounds).then((ended) => {
      if (!ended) reply.header('connection', 'close');
      done(null, payload);
    });
  });
}

// Reads what is left of a request's body and drops it: true once it has ended, false when
// it would take more than the bounds allow (a declared length past them is not read at all).
export function drainBody(req: IncomingMessage, bounds: { maxBytes: number; maxMs: number }): Promise<boolean> {
  if (req.complete) return Promise.resolve(true);
  const declared = Number(req.headers['content-length']);
  if (req.destroyed || declared > bounds.maxBytes) return Promise.resolve(false);
  return new Promise((resolve) => {
    let drained = 0;
    const finish = (ended: boolean) => {
      clearTimeout(timer);
      req.off('data', onData).off('end', onEnd).off('close', onClose).off('error', onClose);
      if (!ended) req.pause();
      resolve(ended);
    };
    const onData = (chunk: Buffer) => {
      drained += chunk.length;
      if (drained > bounds.maxBytes) finish(false);
    };
    const onEnd = () => finish(true);
    const onClose = () => finish(req.complete);
    const timer = setTimeout(() => finish(false), bounds.maxMs);
    req.on('data', onData).once('end', onEnd).once('close', onClose).once('error', onClose);
    req.resume();
  });
}
