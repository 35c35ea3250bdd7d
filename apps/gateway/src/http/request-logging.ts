import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { Params } from 'nestjs-pino';
import { pino, type Logger } from 'pino';
import { APP_CONFIG, logContext, logDestination, pinoOptions, runWithLogContext, type AppConfig } from '@drydock/core';

// A client's own request id is kept when it looks like one; otherwise the gateway makes
// one. Either way it is answered in X-Request-Id and carried to the worker.
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

// The first hook of every request (Fastify's onRequest, given Node's request and
// response): its id, the log context every line of it carries (the tenant and the
// execution are added as they become known), and one JSON line when it is answered
// (method, path without its query, which may hold a signed link's signature; status;
// time). Written here with one shared logger rather than by
// pino-http: its child logger and second async context per request cost the gateway
// ~0.3 ms of CPU a request (bench/README.md, "What metrics and logs cost").
export function requestLogging(config: AppConfig) {
  // Without pino's redaction: this logger only ever writes the line below, whose keys are
  // fixed here (ids, method, path, status, time), and none is a redacted path; redacting
  // re-parsed the eleven paths for every line, 14 against 3 µs of CPU per line.
  const { redact: _unused, ...options } = pinoOptions(config, 'gateway');
  const logger: Logger = pino(options, logDestination());
  return (req: IncomingMessage, res: ServerResponse, next: () => void): void => {
    const offered = req.headers['x-request-id'];
    const id = typeof offered === 'string' && CLIENT_REQUEST_ID.test(offered) ? offered : randomUUID();
    res.setHeader('X-Request-Id', id);
    const started = performance.now();
    runWithLogContext({ requestId: id }, () => {
      const context = logContext();
      if (!(req.url ?? '').startsWith('/health')) {
        res.once('finish', () => {
          const status = res.statusCode;
          const level = status >= 500 ? 'error' : status >= 400 ? 'warn' : 'info';
          // The context as the request left it: the tenant and the execution included.
          logger[level](
            { ...context, req: { id, method: req.method, path: (req.url ?? '').split('?')[0] }, res: { statusCode: status }, responseTime: Math.round(performance.now() - started) },
            'request completed',
          );
        });
      }
      next();
    });
  };
}

// nestjs-pino: Nest's own logs (start-up, services) as JSON lines. Its per-request
// middleware is not used: requestLogging above writes the request lines.
export const gatewayLogging = {
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig): Params => ({
    forRoutes: [],
    pinoHttp: [pinoOptions(config, 'gateway'), logDestination()],
  }),
};
