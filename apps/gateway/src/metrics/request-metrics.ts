import type { FastifyReply, FastifyRequest } from 'fastify';
import type { PlatformMetrics } from '@drydock/metrics';

// The time of every request (Fastify's onResponse hook), labelled by its route pattern
// (never its path: ids would make a series per session), method and status.
export function requestMetrics(metrics: PlatformMetrics) {
  return (request: FastifyRequest, reply: FastifyReply, done: () => void): void => {
    const route = request.is404 ? 'unmatched' : (request.routeOptions.url ?? 'unmatched');
    metrics.httpSeconds.observe({ method: request.method, route, status: String(reply.statusCode) }, reply.elapsedTime / 1000);
    done();
  };
}
