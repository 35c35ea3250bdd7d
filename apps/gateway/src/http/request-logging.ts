import { randomUUID } from 'node:crypto';
import type { IncomingMessage, ServerResponse } from 'node:http';
import type { NextFunction, Request, Response } from 'express';
import type { Params } from 'nestjs-pino';
import { APP_CONFIG, logDestination, pinoOptions, runWithLogContext, type AppConfig } from '@drydock/core';

// A client's own request id is kept when it looks like one; otherwise the gateway makes
// one. Either way it is answered in X-Request-Id and carried to the worker.
const CLIENT_REQUEST_ID = /^[A-Za-z0-9._:-]{1,64}$/;

type WithId = IncomingMessage & { id?: string };

// First middleware of every request: its id, and the log context every line of it
// carries (the tenant and the execution are added as they become known).
export function requestContext(req: Request, res: Response, next: NextFunction): void {
  const offered = req.headers['x-request-id'];
  const id = typeof offered === 'string' && CLIENT_REQUEST_ID.test(offered) ? offered : randomUUID();
  (req as WithId).id = id;
  res.setHeader('X-Request-Id', id);
  runWithLogContext({ requestId: id }, next);
}

// nestjs-pino: one JSON line per finished request (method, path without its query,
// which may hold a signed link's signature; status; time), and Nest's own logs as JSON.
export const gatewayLogging = {
  inject: [APP_CONFIG],
  useFactory: (config: AppConfig): Params => ({
    pinoHttp: [
      {
        ...pinoOptions(config, 'gateway'),
        genReqId: (req: IncomingMessage) => (req as WithId).id ?? randomUUID(),
        quietReqLogger: true,
        customLogLevel: (_req: IncomingMessage, res: ServerResponse, error?: Error) =>
          error || res.statusCode >= 500 ? 'error' : res.statusCode >= 400 ? 'warn' : 'info',
        autoLogging: { ignore: (req: IncomingMessage) => (req.url ?? '').startsWith('/health') },
        serializers: {
          req: (req: { id?: string; method?: string; url?: string }) => ({ id: req.id, method: req.method, path: (req.url ?? '').split('?')[0] }),
          res: (res: { statusCode?: number }) => ({ statusCode: res.statusCode }),
        },
      },
      logDestination(),
    ],
  }),
};
