import { Logger } from '@nestjs/common';
import { pino } from 'pino';
import { APP_CONFIG, logDestination, logFatalErrors, pinoOptions, startupFailure, type AppConfig } from '@drydock/core';
import { createGateway } from './bootstrap.js';

try {
  const app = await createGateway();
  const config = app.get<AppConfig>(APP_CONFIG);
  // From here an error nothing caught is a fatal log line before the process stops.
  logFatalErrors(pino(pinoOptions(config, 'gateway'), logDestination()));
  await app.listen(config.gateway.port, config.gateway.host);
  const url = await app.getUrl();
  new Logger('Gateway').log(`Drydock gateway listening on ${url.replace('[::1]', 'localhost')}`);
} catch (error) {
  const failure = startupFailure('gateway', error);
  if (failure === null) throw error;
  console.error(failure);
  process.exit(1);
}
