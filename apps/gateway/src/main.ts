import { Logger } from '@nestjs/common';
import { PinoLogger } from 'nestjs-pino';
import { APP_CONFIG, applyHeapGrowingPolicy, logFatalErrors, routeProcessWarnings, startupFailure, type AppConfig } from '@drydock/core';
import { createGateway } from './bootstrap.js';

// Node's warnings become lines of the JSON log, not plain text beside them.
const warnings = routeProcessWarnings();
try {
  // V8's heap growing (DRYDOCK_HEAP_GROWING_PERCENT; docs/operations.md, "Memory").
  applyHeapGrowingPolicy();
  const app = await createGateway();
  const config = app.get<AppConfig>(APP_CONFIG);
  // From here an error nothing caught is a fatal line of the app's logger (nestjs-pino's
  // root) before the process stops.
  logFatalErrors(PinoLogger.root);
  warnings.to(PinoLogger.root);
  await app.listen(config.gateway.port, config.gateway.host);
  const url = await app.getUrl();
  new Logger('Gateway').log(`Drydock gateway listening on ${url.replace('[::1]', 'localhost')}`);
} catch (error) {
  warnings.release();
  const failure = startupFailure('gateway', error);
  if (failure === null) throw error;
  console.error(failure);
  process.exit(1);
}
