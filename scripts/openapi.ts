// Writes the gateway's OpenAPI document to a file (or stdout) without databases: the
// application is built in Nest's preview mode, which reads the controllers' metadata but
// starts no provider. `npm run openapi -- docs/openapi.json`.
import 'reflect-metadata';
import { writeFileSync } from 'node:fs';
import { NestFactory } from '@nestjs/core';
import { GatewayModule } from '../apps/gateway/src/gateway.module.js';
import { buildOpenApiDocument } from '../apps/gateway/src/openapi/openapi.document.js';

const app = await NestFactory.create(GatewayModule.forRoot(), { preview: true, logger: false, abortOnError: false });
const json = JSON.stringify(buildOpenApiDocument(app), null, 2) + '\n';
const target = process.argv[2];
if (target) writeFileSync(target, json);
else process.stdout.write(json);
await app.close();
