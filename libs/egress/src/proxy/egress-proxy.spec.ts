import { mkdtemp, rm } from 'node:fs/promises';
import { createServer, request, type Server } from 'node:http';
import { createServer as createNetServer, type AddressInfo, type Server as NetServer, type Socket } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { connect as tlsConnect } from 'node:tls';
import { parseAllowList, type AllowEntry } from '../policy/allow-entries.js';
import { parseRanges } from '../policy/address-rules.js';
import { EgressProxy, type EgressListener } from './egress-proxy.js';
import { EgressResolver, PlatformEndpoints } from './egress-resolver.js';
import type { EffectivePolicy, EgressConnectionRecord, EgressPolicySource } from './egress-types.js';

const listen = <T extends Server | NetServer>(server: T) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

describe('EgressProxy', () => {
  let dir: string;
  let web: Server;
  let webPort: number;
  let raw: NetServer;
  let rawPort: number;
  let rawReceived: Buffer[];
  let records: EgressConnectionRecord[];
  let policy: EffectivePolicy | null;
  let proxy: EgressProxy;
  let listener: EgressListener;

  const entries = (list: string[]) => (parseAllowList(list) as { entries: AllowEntry[] }).entries;

  beforeAll(async () => {
    dir = await mkdtemp(join(tmpdir(), 'egress-'));
    web = createServer((req, res) => {
      let body = '';
      req.on('data', (c: Buffer) => (body += c.toString()));
      req.on('end', () => res.end(`hello ${req.method} ${req.url} host=${req.headers.host} proxy-auth=${req.headers['proxy-authorization'] ?? '-'} body=${body}`));
    });
    webPort = await listen(web);
    raw = createNetServer((socket: Socket) => {
      socket.on('data', (chunk: Buffer) => rawReceived.push(chunk));
      socket.on('error', () => undefined);
    });
    rawPort = await listen(raw);
    const resolver = new EgressResolver({ 'allowed.test': ['127.0.0.1'], 'other.test': ['127.0.0.1'] }, 2_000);
    const platform = new PlatformEndpoints([{ host: '127.0.0.1', port: 5999 }], resolver);
    await platform.refresh();
    const policies: EgressPolicySource = { policyFor: async () => policy };
    proxy = new EgressProxy({ policies, sink: { record: (r) => records.push(r) }, resolver, platform, connectTimeoutMs: 2_000, workerId: 'w1' });
    listener = await proxy.listen(join(dir, 'egress.sock'), () => ({ tenantId: 'ten_a', sessionId: 'ses_a' }));
  });

  beforeEach(() => {
    records = [];
    rawReceived = [];
    policy = { entries: entries([`allowed.test:${webPort}`, `allowed.test:${rawPort}`, 'other.test:5999']), ranges: parseRanges(['127.0.0.1/32']) };
  });

  afterAll(async () => {
    await listener.close();
    web.close();
    raw.close();
    await rm(dir, { recursive: true, force: true });
  });

  const get = (url: string, headers: Record<string, string> = {}) =>
    new Promise<{ status: number; message: string; body: string }>((resolve, reject) => {
      const req = request({ socketPath: listener.socketPath, path: url, headers: { host: new URL(url).host, ...headers } }, (res) => {
        let body = '';
        res.on('data', (c: Buffer) => (body += c.toString()));
        res.on('end', () => resolve({ status: res.statusCode!, message: res.statusMessage ?? '', body }));
      });
      req.on('error', reject);
      req.end();
    });

  const tunnel = (target: string) =>
    new Promise<{ status: number; message: string; socket: Socket }>((resolve, reject) => {
      const req = request({ socketPath: listener.socketPath, method: 'CONNECT', path: target });
      req.on('connect', (res, socket: Socket) => resolve({ status: res.statusCode!, message: res.statusMessage ?? '', socket }));
      req.on('response', (res) => resolve({ status: res.statusCode!, message: res.statusMessage ?? '', socket: res.socket }));
      req.on('error', reject);
      req.end();
    });

  const settle = () => new Promise((r) => setTimeout(r, 100));

  it('should forward an allowed plain request without the proxy headers and log it with its bytes', async () => {
    const res = await get(`http://allowed.test:${webPort}/x?y=1`, { 'proxy-authorization': 'Basic secret' });
    expect(res.status).toBe(200);
    expect(res.body).toBe(`hello GET /x?y=1 host=allowed.test:${webPort} proxy-auth=- body=`);
    await settle();
    expect(records).toEqual([
      expect.objectContaining({ verdict: 'allowed', host: 'allowed.test', port: webPort, address: '127.0.0.1', rule: `allowed.test:${webPort}`, tenantId: 'ten_a', sessionId: 'ses_a' }),
    ]);
    // The whole answer, its head included.
    expect(records[0]!.bytesIn).toBeGreaterThan(res.body.length);
  });

  it('should forward a request body, given whole or chunked, and close the connection after the answer', async () => {
    const post = (headers: Record<string, string>, parts: string[]) =>
      new Promise<{ body: string; connection: string | undefined }>((resolve, reject) => {
        const req = request({ socketPath: listener.socketPath, method: 'POST', path: `http://allowed.test:${webPort}/p`, headers: { host: `allowed.test:${webPort}`, ...headers } }, (res) => {
          let body = '';
          res.on('data', (c: Buffer) => (body += c.toString()));
          res.on('end', () => resolve({ body, connection: res.headers.connection }));
        });
        req.on('error', reject);
        for (const p of parts) req.write(p);
        req.end();
      });
    expect(await post({ 'content-length': '5' }, ['hello'])).toEqual({ body: `hello POST /p host=allowed.test:${webPort} proxy-auth=- body=hello`, connection: 'close' });
    expect((await post({}, ['chunk ', 'by ', 'chunk'])).body).toContain('body=chunk by chunk');
    await settle();
    expect(records.map((r) => r.verdict)).toEqual(['allowed', 'allowed']);
    expect(records[0]!.bytesOut).toBeGreaterThan(5);
  });

  it('should refuse a host off the list with 403 naming the list, and log it', async () => {
    const res = await get('http://evil.test/');
    expect(res.status).toBe(403);
    expect(res.message).toContain('evil.test:80 is not on this session');
    expect(res.body).toContain(`allowed.test:${webPort}`);
    expect(records).toEqual([expect.objectContaining({ verdict: 'denied', host: 'evil.test', port: 80, rule: null })]);
  });

  it('should refuse a Host header naming another host than the URL', async () => {
    const res = await get(`http://allowed.test:${webPort}/`, { host: 'evil.test' });
    expect(res.status).toBe(403);
    expect(records[0]).toMatchObject({ verdict: 'denied', reason: expect.stringContaining('Host header') });
  });

  it('should refuse IP literals, loopback without a range, and the platform own services', async () => {
    expect((await get(`http://127.0.0.1:${webPort}/`)).status).toBe(403);
    expect((await get('http://169.254.169.254/latest/meta-data/')).status).toBe(403);
    expect((await get('http://other.test:5999/')).message).toContain("platform's own services");
    policy = { ...policy!, ranges: [] };
    const loopback = await get(`http://allowed.test:${webPort}/`);
    expect(loopback.status).toBe(403);
    expect(loopback.body).toContain('loopback');
    expect(records.map((r) => r.verdict)).toEqual(['denied', 'denied', 'denied', 'denied']);
  });

  it('should refuse everything when the subject has no policy', async () => {
    policy = null;
    const res = await get(`http://allowed.test:${webPort}/`);
    expect(res.status).toBe(403);
    expect(res.body).toContain('no network access');
  });

  it('should open a tunnel whose TLS ClientHello names its target, and pass the bytes on', async () => {
    const { status, socket } = await tunnel(`allowed.test:${rawPort}`);
    expect(status).toBe(200);
    const tls = tlsConnect({ socket, servername: 'allowed.test', rejectUnauthorized: false });
    tls.on('error', () => undefined);
    await new Promise((r) => setTimeout(r, 300));
    expect(Buffer.concat(rawReceived)[0]).toBe(0x16);
    tls.destroy();
    await new Promise((r) => setTimeout(r, 200));
    expect(records).toEqual([expect.objectContaining({ verdict: 'allowed', host: 'allowed.test', port: rawPort })]);
    expect(records[0]!.bytesOut).toBeGreaterThan(100);
  });

  it('should close a tunnel whose SNI names another host, before any byte reaches it', async () => {
    const { status, socket } = await tunnel(`allowed.test:${rawPort}`);
    expect(status).toBe(200);
    const tls = tlsConnect({ socket, servername: 'evil.test', rejectUnauthorized: false });
    const closed = new Promise((r) => tls.once('close', r));
    tls.on('error', () => undefined);
    await closed;
    expect(rawReceived).toEqual([]);
    expect(records).toEqual([expect.objectContaining({ verdict: 'denied', reason: expect.stringContaining('names evil.test, not the CONNECT target allowed.test') })]);
  });

  it('should close a tunnel that does not carry TLS', async () => {
    const { socket } = await tunnel(`allowed.test:${rawPort}`);
    socket.write('GET / HTTP/1.1\r\nHost: evil.test\r\n\r\n');
    await new Promise((r) => socket.once('close', r));
    expect(rawReceived).toEqual([]);
    expect(records[0]).toMatchObject({ verdict: 'denied', reason: expect.stringContaining('must carry TLS') });
  });

  it('should refuse a CONNECT off the list with 403 in the status line', async () => {
    const res = await tunnel('evil.test:443');
    expect(res.status).toBe(403);
    expect(res.message).toContain('evil.test:443 is not on this session');
  });
});
