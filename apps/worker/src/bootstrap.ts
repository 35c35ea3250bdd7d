import 'reflect-metadata';
import type { INestApplicationContext } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import { WorkerModule } from './worker.module.js';

// The worker serves no HTTP: it is an application context that consumes its queue.
export async function createWorker(options: { logger?: false } = {}): Promise<INestApplicationContext> {
  const app = await NestFactory.createApplicationContext(WorkerModule, {
    logger: options.logger ?? ['log', 'warn', 'error'],
  });
  app.enableShutdownHooks();
  return app;
}
