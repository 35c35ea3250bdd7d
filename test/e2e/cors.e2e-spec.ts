import type { INestApplication } from '@nestjs/common';
import { spawn } from 'node:child_process';
import { randomBytes } from 'node:crypto';
import { mkdtempSync, rmSync } from 'node:fs';
import { createServer, type Server } from 'node:http';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { build, stop as stopEsbuild } from 'esbuild';
import { createGateway } from '../../apps/gateway/src/bootstrap.js';
import { runMigrations } from '../../migrations/index.js';
import { applyTestEnv } from './support/test-env.js';

// CORS_ORIGINS: pages of those origins may call the gateway from a browser, with the
// SDK and no proxy in front; any other origin gets no CORS headers, and a gateway
// without the setting sends none at all. Only the gateway is needed: no worker.
describe('CORS', () => {
  let page: Server;
  let pageOrigin: string;
  let withCors: INestApplication;
  let withoutCors: INestApplication;
  let url: string;
  let plainUrl: string;
  let apiKey: string;

  const start = async (env: Record<string, string>) => {
    const saved = Object.fromEntries(Object.keys(env).map((key) => [key, process.env[key]]));
    Object.assign(process.env, env);
    try {
      const app = await createGateway({ logger: false });
      await app.listen(0, '127.0.0.1');
      return { app, url: (await app.getUrl()).replace('[::1]', '127.0.0.1') };
    } finally {
      for (const [key, value] of Object.entries(saved)) {
        if (value === undefined) delete process.env[key];
        else process.env[key] = value;
      }
    }
  };
  const preflight = (base: string, origin: string, method = 'PUT') =>
    fetch(`${base}/v1/threads/cors-t/files/content?path=/a.txt`, {
      method: 'OPTIONS',
      headers: { origin, 'access-control-request-method': method, 'access-control-request-headers': 'authorization,content-type' },
    });
  const corsHeaders = (response: Response) => [...response.headers.keys()].filter((name) => name.startsWith('access-control-'));

  beforeAll(async () => {
    applyTestEnv();
    await runMigrations(process.env.DATABASE_URL!);
    // The page server first: its origin is the allowed one.
    page = createServer();
    await new Promise<void>((resolve) => page.listen(0, '127.0.0.1', resolve));
    pageOrigin = `http://127.0.0.1:${(page.address() as { port: number }).port}`;
    ({ app: withCors, url } = await start({ GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1', CORS_ORIGINS: `https://app.example.com, ${pageOrigin}` }));
    ({ app: withoutCors, url: plainUrl } = await start({ GATEWAY_PORT: '0', GATEWAY_HOST: '127.0.0.1' }));
    const created = await fetch(`${url}/admin/tenants`, {
      method: 'POST',
      headers: { authorization: `Bearer ${process.env.DRYDOCK_ADMIN_KEY}`, 'content-type': 'application/json' },
      body: JSON.stringify({ name: `cors-${randomBytes(3).toString('hex')}` }),
    });
    apiKey = ((await created.json()) as { apiKey: string }).apiKey;
  });

  afterAll(async () => {
    await withCors?.close();
    await withoutCors?.close();
    page?.closeAllConnections();
    page?.close();
  });

  it('should answer a preflight from an allowed origin with the CORS headers', async () => {
    const response = await preflight(url, 'https://app.example.com');
    expect(response.status).toBe(204);
    expect(response.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(response.headers.get('access-control-allow-methods')).toContain('PUT');
    expect(response.headers.get('access-control-allow-headers')?.toLowerCase()).toBe('authorization,content-type');
    expect(response.headers.get('access-control-max-age')).toBe('600');
    expect(response.headers.get('access-control-allow-credentials')).toBeNull();
    expect(response.headers.get('vary')).toContain('Origin');
  });

  it('should give a preflight from another origin no CORS headers', async () => {
    const response = await preflight(url, 'https://evil.example.com');
    expect(corsHeaders(response)).toEqual([]);
    expect(response.status).toBe(404);
    // Not a prefix match: the allowed origin with another port is another origin.
    expect(corsHeaders(await preflight(url, 'https://app.example.com:8443'))).toEqual([]);
  });

  it('should let an allowed origin read answers and errors, with the request id exposed', async () => {
    const ok = await fetch(`${url}/v1/sessions`, { headers: { origin: 'https://app.example.com', authorization: `Bearer ${apiKey}` } });
    expect(ok.status).toBe(200);
    expect(ok.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    expect(ok.headers.get('access-control-expose-headers')).toContain('X-Request-Id');
    expect(ok.headers.get('access-control-expose-headers')).toContain('Retry-After');
    // An error the auth guard answers carries them too, so the page can read its code.
    const refused = await fetch(`${url}/v1/sessions`, { headers: { origin: 'https://app.example.com', authorization: 'Bearer ddk_nope' } });
    expect(refused.status).toBe(401);
    expect(refused.headers.get('access-control-allow-origin')).toBe('https://app.example.com');
    const other = await fetch(`${url}/v1/sessions`, { headers: { origin: 'https://evil.example.com', authorization: `Bearer ${apiKey}` } });
    expect(other.status).toBe(200);
    expect(other.headers.get('access-control-allow-origin')).toBeNull();
  });

  it('should send no CORS headers at all without CORS_ORIGINS', async () => {
    const response = await preflight(plainUrl, 'https://app.example.com');
    expect(corsHeaders(response)).toEqual([]);
    const get = await fetch(`${plainUrl}/v1/sessions`, { headers: { origin: 'https://app.example.com', authorization: `Bearer ${apiKey}` } });
    expect(get.headers.get('access-control-allow-origin')).toBeNull();
  });

  // A page of the allowed origin uses the bundled SDK against the gateway directly (no
  // proxy): a file written and read back, a listing and a typed error. The same page
  // against the gateway without CORS_ORIGINS is refused by the browser.
  it('should let a page of an allowed origin use the SDK from headless Chromium, and refuse it without the setting', async () => {
    const dir = mkdtempSync(join(tmpdir(), 'drydock-cors-'));
    try {
      const bundled = await build({ entryPoints: ['packages/client/src/index.ts'], bundle: true, format: 'esm', platform: 'browser', target: 'es2022', write: false, logLevel: 'silent' });
      await stopEsbuild();
      const script = bundled.outputFiles[0]!.text;
      const html = (gateway: string) => `<!doctype html><meta charset="utf-8"><script type="module">
        import { Drydock } from '/drydock.js';
        const report = (body) => fetch('/report', { method: 'POST', body: JSON.stringify(body) });
        try {
          const client = new Drydock({ url: ${JSON.stringify(gateway)}, apiKey: ${JSON.stringify(apiKey)}, retry: { attempts: 1 } });
          const files = client.files('cors-browser');
          await files.write('/hello.txt', 'from another origin');
          const text = await files.readText('/hello.txt');
          const sessions = (await client.sessions.list()).length;
          const missing = await files.readText('/nope').catch((e) => [e.code, typeof e.requestId]);
          report({ text, sessions, missing });
        } catch (e) { report({ failure: e.code ?? String(e) }); }
      </script>`;
      const reports: ((body: Record<string, unknown>) => void)[] = [];
      page.on('request', (req, res) => {
        if (req.url === '/drydock.js') return void res.writeHead(200, { 'content-type': 'text/javascript' }).end(script);
        if (req.url === '/report') {
          let body = '';
          req.on('data', (c) => (body += c)).on('end', () => {
            res.end();
            reports.shift()?.(JSON.parse(body));
          });
          return;
        }
        res.writeHead(200, { 'content-type': 'text/html' }).end(html(req.url === '/plain' ? plainUrl : url));
      });
      const open = async (path: string) => {
        const reported = new Promise<Record<string, unknown>>((resolve) => reports.push(resolve));
        const browser = spawn('chromium', ['--headless', '--no-sandbox', '--disable-gpu', '--disable-dev-shm-usage', `--user-data-dir=${dir}/profile${path.replace('/', '-')}`, `${pageOrigin}${path}`], { stdio: 'ignore', detached: true });
        const exited = new Promise((resolve) => browser.once('exit', resolve));
        let timer: NodeJS.Timeout | undefined;
        try {
          const timeout = new Promise<never>((_, reject) => (timer = setTimeout(() => reject(new Error(`the page ${path} never reported`)), 60_000)));
          return await Promise.race([reported, timeout]);
        } finally {
          clearTimeout(timer);
          // Chromium's helpers are in its process group.
          process.kill(-browser.pid!, 'SIGKILL');
          await exited;
        }
      };
      expect(await open('/')).toEqual({ text: 'from another origin', sessions: 0, missing: ['FILE_NOT_FOUND', 'string'] });
      expect(await open('/plain')).toEqual({ failure: 'NETWORK_ERROR' });
    } finally {
      rmSync(dir, { recursive: true, force: true });
    }
  }, 180_000);
});
