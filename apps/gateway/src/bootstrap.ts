import 'reflect-metadata';
import type { IncomingMessage } from 'node:http';
import { ValidationPipe, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { Logger } from 'nestjs-pino';
import { GatewayModule, type GatewayOptions } from './gateway.module.js';
import { requestLogging } from './http/request-logging.js';
import { requestMetrics } from './metrics/request-metrics.js';
import { PlatformMetrics } from '@drydock/metrics';
import { QueueDashboard } from './queue/queue-dashboard.js';
import { mountOpenApiDocs } from './openapi/openapi.document.js';

const FILE_CONTENT_ROUTE = /^\/v1\/threads\/[^/]+\/files\/content(\?|$)/;
const BATCH_SUBMIT_ROUTE = /^\/v1\/batches\/?(\?|$)/;

// Builds the gateway application without listening, so tests and main.ts share it.
export async function createGateway(options: { logger?: false } & GatewayOptions = {}): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(GatewayModule.forRoot(options), {
    bodyParser: false,
    // Buffered until the JSON logger takes over (below), so start-up lines are JSON too.
    bufferLogs: options.logger !== false,
    logger: options.logger ?? ['log', 'warn', 'error'],
  });
  if (options.logger !== false) app.useLogger(app.get(Logger));
  const config = app.get<AppConfig>(APP_CONFIG);
  app.use(requestLogging(config));
  app.use(requestMetrics(app.get(PlatformMetrics)));
  // File uploads take the raw body (any Content-Type, up to the file size limit);
  // every other route takes JSON.
  const isFileUpload = (req: IncomingMessage) => req.method === 'PUT' && FILE_CONTENT_ROUTE.test(req.url ?? '');
  // A batch submitted as JSON may be far larger than other requests (NDJSON batches are
  // not parsed here: the controller streams them).
  const isBatchSubmit = (req: IncomingMessage) => req.method === 'POST' && BATCH_SUBMIT_ROUTE.test(req.url ?? '');
  const isJson = (req: IncomingMessage) => /\bjson\b/i.test(req.headers['content-type'] ?? '');
  app.useBodyParser('raw', { limit: config.vfs.maxFileBytes, type: isFileUpload });
  app.useBodyParser('json', { limit: config.batches.maxBodyBytes, type: (req: IncomingMessage) => isBatchSubmit(req) && isJson(req) });
  app.useBodyParser('json', {
    limit: config.gateway.maxBodyBytes,
    type: (req: IncomingMessage) => !isFileUpload(req) && !isBatchSubmit(req) && isJson(req),
  });
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, transform: true }));
  app.get(QueueDashboard).mount(app);
  mountOpenApiDocs(app);
  app.disable('x-powered-by');
  // Express hashes every response body for a weak ETag; JSON answers are not cached by
  // ETag (file and artifact contents set their own, the content's SHA-256).
  app.set('etag', false);
  app.enableShutdownHooks();
  return app;
}
