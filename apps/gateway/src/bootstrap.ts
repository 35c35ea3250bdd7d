import 'reflect-metadata';
import { ValidationPipe, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { FastifyAdapter, type NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyError, FastifyReply, FastifyRequest } from 'fastify';
import { APP_CONFIG, SHUTDOWN_SIGNALS, type AppConfig } from '@drydock/core';
import { Logger } from 'nestjs-pino';
import { GatewayModule, type GatewayOptions } from './gateway.module.js';
import { registerBodyParsers } from './http/body-parsing.js';
import { drainRefusedBodies } from './http/refused-body.js';
import { ErrorResponseFilter } from './http/error-response.filter.js';
import { requestLogging } from './http/request-logging.js';
import { requestMetrics } from './metrics/request-metrics.js';
import { PlatformMetrics } from '@drydock/metrics';
import { QueueDashboard } from './queue/queue-dashboard.js';
import { mountOpenApiDocs } from './openapi/openapi.document.js';
import { mountTerminalSocket } from './terminals/terminal-socket.js';

// Path parameters longer than this answer 414 before any handler runs. Ids are far
// shorter; the router's default (100) would refuse a long thread id that the thread-id
// rules allow.
const MAX_PARAM_LENGTH = 1024;

// Builds the gateway application without listening, so tests and main.ts share it.
// Nest runs on Fastify (@nestjs/platform-fastify): its router and reply cost about a
// third of Express's CPU per request (bench/http-adapter, docs/decisions/012-fastify.md).
export async function createGateway(options: { logger?: false } & GatewayOptions = {}): Promise<INestApplication> {
  const adapter = new FastifyAdapter({
    // As Express matched them: /v1/batches/ is /v1/batches.
    routerOptions: { ignoreTrailingSlash: true, maxParamLength: MAX_PARAM_LENGTH },
    // Requests are logged once, by requestLogging below; Fastify's own logger is off.
    logger: false,
    // Node's own limit on receiving a whole request, which the gateway had on Express
    // (Fastify's default, 0, would let a client trickle a body in forever).
    requestTimeout: 300_000,
    // A malformed URL (400) or an over-long path parameter (414), which the router refuses
    // before any hook runs, answered with the error envelope like everything else.
    frameworkErrors: (error: FastifyError, _request: FastifyRequest, reply: FastifyReply) => {
      const { status, body } = new ErrorResponseFilter().toResponse(error);
      void reply.status(status).send(body);
    },
  });
  const app = await NestFactory.create<NestFastifyApplication>(GatewayModule.forRoot(options), adapter, {
    bodyParser: false,
    // Buffered until the JSON logger takes over (below), so start-up lines are JSON too.
    bufferLogs: options.logger !== false,
    logger: options.logger ?? ['log', 'warn', 'error'],
  });
  if (options.logger !== false) app.useLogger(app.get(Logger));
  const config = app.get<AppConfig>(APP_CONFIG);
  const fastify = app.getHttpAdapter().getInstance();
  const logging = requestLogging(config);
  fastify.addHook('onRequest', (request, reply, done) => logging(request.raw, reply.raw, done));
  fastify.addHook('onResponse', requestMetrics(app.get(PlatformMetrics)));
  enableCors(app, config.cors.origins);
  registerBodyParsers(fastify, config);
  drainRefusedBodies(fastify);
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, transform: true }));
  await app.get(QueueDashboard).mount(app);
  await mountTerminalSocket(app);
  mountOpenApiDocs(app);
  app.enableShutdownHooks(SHUTDOWN_SIGNALS);
  return app;
}

// Answers that a browser script may read besides the CORS-safelisted ones: the request id
// of an error, a 429's or 503's Retry-After, and what a download carries.
const EXPOSED_HEADERS = ['X-Request-Id', 'Retry-After', 'ETag', 'Content-Disposition', 'Content-Range', 'Content-Length'];

// CORS for the origins of CORS_ORIGINS only (none: no CORS headers at all), through
// Nest's Fastify adapter, which registers @fastify/cors so that a preflight is answered
// before any other hook. A preflight from any other origin gets no CORS headers (and a
// 404), so the browser refuses the request. Keys travel in `Authorization`, never in
// cookies: no credentials mode.
function enableCors(app: INestApplication, origins: readonly string[]): void {
  if (origins.length === 0) return;
  const allowed = new Set(origins);
  app.enableCors({
    origin: (origin: string | undefined, callback: (error: Error | null, allow: boolean) => void) => callback(null, origin !== undefined && allowed.has(origin)),
    methods: ['GET', 'HEAD', 'POST', 'PUT', 'PATCH', 'DELETE'],
    exposedHeaders: EXPOSED_HEADERS,
    // Browsers keep a preflight's answer this long (Chromium caps it at 2 hours).
    maxAge: 600,
  });
}
