import { execFile } from 'node:child_process';
import { mkdirSync, readdirSync, readFileSync, statSync } from 'node:fs';
import { join } from 'node:path';
import { promisify } from 'node:util';
import SwaggerParser from '@apidevtools/swagger-parser';
import { startPlatform, type Platform } from './support/platform.js';

const run = promisify(execFile);

interface Operation {
  operationId?: string;
  summary?: string;
  security?: Record<string, string[]>[];
  responses: Record<string, { content?: Record<string, { schema?: Record<string, unknown> }> }>;
}
type Document = { paths: Record<string, Record<string, Operation>> } & Record<string, unknown>;

const METHODS = ['get', 'post', 'put', 'patch', 'delete'];
const PUBLIC = /^\/(health|v1\/signed\/)/;

// The routes Fastify serves, as its onRoute hook saw them registered: what the
// controllers registered, whatever the document says. `/docs` is the document's own page,
// `/admin/queues/ui` the queue dashboard's; HEAD routes are Fastify's own, for each GET.
function servedRoutes(platform: Platform): { method: string; path: string }[] {
  return platform.routes
    .filter(({ method, url }) => METHODS.includes(method.toLowerCase()) && !/^\/(docs|admin\/queues\/ui)(\/|$)/.test(url))
    .map(({ method, url }) => ({ method: method.toLowerCase(), path: url }));
}

const toOpenApiPath = (path: string) => path.replace(/:([A-Za-z_]+)/g, '{$1}').replace(/\/$/, '') || '/';

// The error codes an operation's documented response for `status` allows.
function documentedCodes(op: Operation, status: number): string[] {
  const schema = op.responses[String(status)]?.content?.['application/json']?.schema as { allOf?: { properties?: { error?: { properties?: { code?: { enum?: string[] } } } } }[] } | undefined;
  return schema?.allOf?.flatMap((part) => part.properties?.error?.properties?.code?.enum ?? []) ?? [];
}

// The OpenAPI document at /docs/openapi.json is valid, lists every route the gateway
// serves with its security and errors, and /docs renders in a real browser.
describe('OpenAPI document', () => {
  let platform: Platform;
  let document: Document;

  beforeAll(async () => {
    platform = await startPlatform();
    const res = await fetch(`${platform.url}/docs/openapi.json`);
    expect(res.status).toBe(200);
    document = (await res.json()) as Document;
  });

  afterAll(async () => {
    await platform?.close();
  });

  const operations = () =>
    Object.entries(document.paths).flatMap(([path, item]) =>
      METHODS.filter((m) => item[m]).map((method) => ({ path, method, op: item[method] })),
    );

  it('should be a valid OpenAPI document', async () => {
    // The validator dereferences in place: give it a copy.
    await expect(SwaggerParser.validate(structuredClone(document) as never)).resolves.toBeDefined();
    expect(document.openapi).toMatch(/^3\./);
  });

  it('should list every route a controller serves', () => {
    const served = servedRoutes(platform);
    expect(served.length).toBeGreaterThan(60);
    const missing = served
      .filter(({ method, path }) => !document.paths[toOpenApiPath(path)]?.[method])
      .map(({ method, path }) => `${method.toUpperCase()} ${path}`);
    expect(missing).toEqual([]);
    // And nothing is documented that is not served.
    const servedKeys = new Set(served.map(({ method, path }) => `${method} ${toOpenApiPath(path)}`));
    const phantom = operations().filter(({ path, method }) => !servedKeys.has(`${method} ${path}`));
    expect(phantom.map(({ method, path }) => `${method} ${path}`)).toEqual([]);
  });

  it('should describe every operation: a summary, a success response and the error envelope', () => {
    const gaps: string[] = [];
    for (const { path, method, op } of operations()) {
      const name = `${method.toUpperCase()} ${path}`;
      if (!op.summary) gaps.push(`${name}: no summary`);
      // A WebSocket's success is its upgrade (101), with no content.
      const success = Object.keys(op.responses).filter((s) => /^2\d\d$/.test(s) || s === '101');
      if (path !== '/mcp' || method === 'post') {
        if (success.length === 0) gaps.push(`${name}: no 2xx response`);
        for (const status of success) {
          if (status !== '204' && status !== '101' && !op.responses[status].content) gaps.push(`${name}: ${status} has no content`);
        }
      }
      for (const [status, response] of Object.entries(op.responses)) {
        if (Number(status) >= 400 && path !== '/mcp' && !/^\/health/.test(path) && documentedCodes(op, Number(status)).length === 0 && !response.content?.['text/plain']) {
          gaps.push(`${name}: ${status} lists no error code`);
        }
      }
    }
    expect(gaps).toEqual([]);
  });

  it('should name both auth schemes and put every non-public route behind one', () => {
    const schemes = (document.components as { securitySchemes: Record<string, { type: string; scheme?: string }> }).securitySchemes;
    expect(schemes.tenantKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    expect(schemes.adminKey).toMatchObject({ type: 'http', scheme: 'bearer' });
    for (const { path, method, op } of operations()) {
      const names = (op.security ?? []).flatMap((s) => Object.keys(s));
      const expected = PUBLIC.test(path) ? [] : /^\/(admin|metrics)/.test(path) ? ['adminKey'] : ['tenantKey'];
      expect([`${method} ${path}`, names.filter((n) => n !== 'tenantApiKeyHeader')]).toEqual([`${method} ${path}`, expected]);
    }
  });

  it('should answer without a key exactly as each protected route documents it', async () => {
    for (const { path, method, op } of operations()) {
      if (PUBLIC.test(path)) continue;
      const url = platform.url + path.replace(/\{[^}]+\}/g, 'x1');
      const res = await fetch(url, { method: method.toUpperCase(), headers: { 'content-type': 'application/json' }, body: method === 'get' || method === 'delete' ? undefined : '{}' });
      const body = (await res.json()) as { error?: { code: string } };
      expect([`${method} ${path}`, res.status]).toEqual([`${method} ${path}`, 401]);
      expect(documentedCodes(op, 401)).toContain(body.error?.code);
    }
  });

  it('should answer real errors with codes the document lists for the route', async () => {
    const tenant = await platform.newTenant();
    const cases: [string, string, string, number, unknown?][] = [
      ['get', '/v1/sessions/{id}', '/v1/sessions/ses_nope', 404],
      ['post', '/v1/sessions', '/v1/sessions', 400, { limits: { memoryMb: 1 } }],
      ['get', '/v1/executions/{id}', '/v1/executions/exe_nope', 404],
      ['get', '/v1/threads/{threadId}/files/read', '/v1/threads/t/files/read?path=/none.txt', 404],
      ['post', '/v1/threads/{threadId}/files/grep', '/v1/threads/t/files/grep', 400, { pattern: '(a', regex: true }],
      ['get', '/v1/artifacts/{id}', '/v1/artifacts/art_nope', 404],
      ['get', '/v1/batches/{id}', '/v1/batches/bat_nope', 404],
      ['get', '/v1/agents/{id}', '/v1/agents/agt_nope', 404],
    ];
    for (const [method, path, url, status, body] of cases) {
      const res = await tenant.request(method.toUpperCase(), url, body === undefined ? {} : { json: body });
      const code = (res.body as { error: { code: string } }).error?.code;
      expect([url, res.status]).toEqual([url, status]);
      expect([url, documentedCodes(document.paths[path][method], status)]).toEqual([url, expect.arrayContaining([code])]);
    }
  });

  it('should only list error codes the code base defines', () => {
    const sources = readSources(['apps', 'libs']);
    const codes = new Set(operations().flatMap(({ op }) => Object.keys(op.responses).flatMap((s) => documentedCodes(op, Number(s)))));
    expect(codes.size).toBeGreaterThan(40);
    expect([...codes].filter((code) => !sources.includes(`'${code}'`) && !sources.includes(`"${code}"`))).toEqual([]);
  });

  it('should render /docs in headless Chromium, every operation on the page', async () => {
    const page = `${platform.url}/docs`;
    const flags = ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', '--virtual-time-budget=15000'];
    const { stdout: dom } = await run('chromium', [...flags, '--dump-dom', page], { maxBuffer: 64 * 1024 * 1024, timeout: 60_000 });
    expect(dom).toContain('Drydock');
    const rendered = dom.match(/class="opblock opblock-/g)?.length ?? 0;
    expect(rendered).toBe(operations().length);
    const dir = join(process.cwd(), 'var', 'screenshots');
    mkdirSync(dir, { recursive: true });
    const file = join(dir, 'openapi-docs.png');
    await run('chromium', [...flags, '--window-size=1280,2400', `--screenshot=${file}`, page], { timeout: 60_000 });
    const png = readFileSync(file);
    expect(png.subarray(1, 4).toString()).toBe('PNG');
    expect(statSync(file).size).toBeGreaterThan(50_000);
  }, 150_000);
});

function readSources(roots: string[]): string {
  const parts: string[] = [];
  const walk = (dir: string) => {
    for (const entry of readdirSync(dir, { withFileTypes: true })) {
      const path = join(dir, entry.name);
      if (entry.isDirectory()) walk(path);
      else if (entry.name.endsWith('.ts') && !entry.name.endsWith('.spec.ts') && !path.includes('/openapi/')) {
        // What @ApiErrors declares is what is checked here, so it does not count.
        parts.push(readFileSync(path, 'utf8').replace(/@ApiErrors\(\{[\s\S]*?\}\)/g, ''));
      }
    }
  };
  for (const root of roots) walk(join(process.cwd(), root));
  return parts.join('\n');
}
