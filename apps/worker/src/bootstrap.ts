import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { SHUTDOWN_SIGNALS } from '@drydock/core';
import { Logger } from 'nestjs-pino';
import { WorkerModule } from './worker.module.js';

// The worker serves no HTTP: it is an application context that consumes its queue.
export async function createWorker(options: { logger?: false } = {}): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(WorkerModule, {
    bufferLogs: options.logger !== false,
    logger: options.logger ?? ['log', 'warn', 'error'],
  });
  if (options.logger !== false) app.useLogger(app.get(Logger));
  app.enableShutdownHooks(SHUTDOWN_SIGNALS);
  return app;
}
