import type { INestApplication } from '@nestjs/common';
import { DocumentBuilder, getSchemaPath, SwaggerModule, type OpenAPIObject } from '@nestjs/swagger';
import { declaredErrors, ErrorEnvelopeDto } from './api-errors.js';
import { ADMIN_KEY_SCHEME, TENANT_HEADER_SCHEME, TENANT_KEY_SCHEME } from './api-auth.js';
import { TERMINAL_ROUTE, TERMINAL_SOCKET_OPERATION } from '../terminals/terminal-socket.js';

export const DOCS_PATH = 'docs';
export const DOCUMENT_PATH = 'docs/openapi.json';

const HTTP_METHODS = ['get', 'put', 'post', 'delete', 'patch', 'options', 'head'] as const;

// The OpenAPI 3 document of every controller route, built from the controllers' and
// DTOs' decorators when the gateway starts (it does not change while it runs).
export function buildOpenApiDocument(app: INestApplication): OpenAPIObject {
  const config = new DocumentBuilder()
    .setTitle('Drydock')
    .setDescription(
      'Self-hosted sandboxes where AI agents run Python and keep files. Every error answers ' +
        '`{"error": {"code", "message", "details"?}}` with a stable code; each operation lists the codes it may answer. ' +
        'Tenant routes take the tenant\'s API key (`Authorization: Bearer ddk_…`); `/admin` routes take the operator\'s admin key. ' +
        'The queue dashboard is at `/admin/queues/ui` (admin key); Prometheus metrics at `/metrics`.',
    )
    .setVersion(process.env.npm_package_version ?? '0.1.0')
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: "A tenant's API key (ddk_…), from POST /admin/tenants/:id/keys." }, TENANT_KEY_SCHEME)
    .addApiKey({ type: 'apiKey', in: 'header', name: 'x-api-key', description: "A tenant's API key, as the LangGraph SDK sends it." }, TENANT_HEADER_SCHEME)
    .addBearerAuth({ type: 'http', scheme: 'bearer', description: "The operator's admin key (DRYDOCK_ADMIN_KEY)." }, ADMIN_KEY_SCHEME)
    .build();
  const document = SwaggerModule.createDocument(app, config, {
    operationIdFactory: (controller, method) => `${controller}_${method}`,
    extraModels: [ErrorEnvelopeDto],
  });
  // The terminal WebSocket is Fastify's own route, not a controller's.
  document.paths[TERMINAL_ROUTE.replace(':id', '{id}')] = { get: structuredClone(TERMINAL_SOCKET_OPERATION) as never };
  addErrorResponses(document);
  return document;
}

// Serves the interactive page at /docs and the document at /docs/openapi.json, both
// without authentication (the document holds no secret, only the API's shape). The
// document is built on the first request for it (then kept), not at every start.
export function mountOpenApiDocs(app: INestApplication): void {
  SwaggerModule.setup(DOCS_PATH, app, () => buildOpenApiDocument(app), {
    jsonDocumentUrl: DOCUMENT_PATH,
    raw: ['json'],
    customSiteTitle: 'Drydock API',
    swaggerOptions: { persistAuthorization: false, tryItOutEnabled: false },
  });
}

// Each operation answers its controller's and its own declared error codes (@ApiErrors),
// one response per status whose `error.code` is an enum of those codes.
function addErrorResponses(document: OpenAPIObject): void {
  for (const item of Object.values(document.paths)) {
    for (const method of HTTP_METHODS) {
      const operation = item[method];
      if (!operation?.operationId) continue;
      const [controller, handler] = operation.operationId.split('_');
      for (const [status, codes] of [...declaredErrors(controller, handler)].sort(([a], [b]) => a - b)) {
        const list = [...codes].sort();
        operation.responses[String(status)] = {
          description: list.map((code) => `\`${code}\``).join(', '),
          ...(status === 429 || status === 503
            ? { headers: { 'Retry-After': { description: 'Seconds to wait before retrying.', schema: { type: 'integer' } } } }
            : {}),
          content: {
            'application/json': {
              schema: {
                allOf: [
                  { $ref: getSchemaPath(ErrorEnvelopeDto) },
                  { type: 'object', properties: { error: { type: 'object', properties: { code: { type: 'string', enum: list } } } } },
                ],
              },
            },
          },
        };
      }
    }
  }
}
