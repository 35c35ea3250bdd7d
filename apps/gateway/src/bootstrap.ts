import 'reflect-metadata';
import { ValidationPipe, type INestApplication } from '@nestjs/common';
import { NestFactory } from '@nestjs/core';
import type { NestExpressApplication } from '@nestjs/platform-express';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { GatewayModule } from './gateway.module.js';

// Builds the gateway application without listening, so tests and main.ts share it.
export async function createGateway(options: { logger?: false } = {}): Promise<INestApplication> {
  const app = await NestFactory.create<NestExpressApplication>(GatewayModule, {
    bodyParser: false,
    logger: options.logger ?? ['log', 'warn', 'error'],
  });
  const config = app.get<AppConfig>(APP_CONFIG);
  app.useBodyParser('json', { limit: config.gateway.maxBodyBytes });
  app.useGlobalPipes(new ValidationPipe({ whitelist: true, transform: true }));
  app.disable('x-powered-by');
  app.enableShutdownHooks();
  return app;
}
