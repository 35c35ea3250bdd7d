import { Logger } from '@nestjs/common';
import { ConfigError, APP_CONFIG, type AppConfig } from '@drydock/core';
import { createGateway } from './bootstrap.js';

try {
  const app = await createGateway();
  const config = app.get<AppConfig>(APP_CONFIG);
  await app.listen(config.gateway.port, config.gateway.host);
  const url = await app.getUrl();
  new Logger('Gateway').log(`Drydock gateway listening on ${url.replace('[::1]', 'localhost')}`);
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}
