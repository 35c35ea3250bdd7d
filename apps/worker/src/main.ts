import { ConfigError } from '@drydock/core';
import { createWorker } from './bootstrap.js';

try {
  await createWorker();
} catch (error) {
  if (error instanceof ConfigError) {
    console.error(error.message);
    process.exit(1);
  }
  throw error;
}
