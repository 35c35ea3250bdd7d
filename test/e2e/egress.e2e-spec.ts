import { createServer, type AddressInfo } from 'node:net';
import { startEgressTargets, type EgressTargets } from '../support/egress-targets.js';
import { startPlatform, type Platform } from './support/platform.js';
import { pollUntil } from './support/until.js';

type Tenant = Awaited<ReturnType<Platform['newTenant']>>;

const freePort = () =>
  new Promise<number>((resolve) => {
    const s = createServer().listen(0, '127.0.0.1', () => {
      const { port } = s.address() as AddressInfo;
      s.close(() => resolve(port));
    });
  });

// Egress (API.md "Network", docs/network.md): a session reaches the hosts of its policy,
// within its tenant's ceiling, through the worker's proxy; everything else is refused
// and logged. The targets are servers on this machine's loopback, which the operator's
// test configuration maps names to (EGRESS_RESOLVE) and lets one tenant reach (its
// ceiling's range 127.0.0.1/32).
describe('Egress', () => {
  let platform: Platform;
  let targets: EgressTargets;
  let gatewayPort: number;
  let api: Tenant;
  let sessionId: string;
  let allow: string[];

  beforeAll(async () => {
    targets = await startEgressTargets('allowed.test');
    gatewayPort = await freePort();
    platform = await startPlatform({
      GATEWAY_PORT: String(gatewayPort),
      EGRESS_RESOLVE: 'allowed.test=127.0.0.1,index.test=127.0.0.1,gateway.test=127.0.0.1,db.test=127.0.0.1',
    });
    allow = [`allowed.test:${targets.httpPort}`, `allowed.test:${targets.httpsPort}`, `gateway.test:${gatewayPort}`, 'db.test:5432'];
    api = await platform.newTenant({
      network: { allow: [...allow, `index.test:${targets.indexPort}`, 'more.test'], ranges: ['127.0.0.1/32'] },
    });
    const session = await api.createSession({ network: { allow } });
    sessionId = session.id;
    const cert = await api.request('PUT', `/v1/threads/${session.threadId}/files/content?path=${encodeURIComponent('/allowed.pem')}`, {
      body: targets.certificatePem,
      headers: { 'content-type': 'application/octet-stream' },
    });
    expect(cert.status).toBeLessThan(300);
  });

  afterAll(async () => {
    await platform?.close();
    await targets?.close();
  });

  const run = async (code: string, client: Tenant = api, id = sessionId) => {
    const res = await client.execute(id, code, { timeoutMs: 60_000 });
    if (res.body.status !== 'ok') console.log(JSON.stringify(res.body).slice(0, 3000));
    expect(res.body).toMatchObject({ status: 'ok' });
    return JSON.parse(res.body.stdout.trim().split('\n').pop()!);
  };

  // Each request's status (or the error text) as seen by urllib through HTTP(S)_PROXY.
  const fetchCode = (urls: Record<string, string>) => `
import json, ssl, urllib.request, urllib.error
import os
ctx = ssl.create_default_context(cafile="/session/allowed.pem" if os.path.exists("/session/allowed.pem") else None)
out = {}
for key, url in ${JSON.stringify(urls)}.items():
    try:
        with urllib.request.urlopen(url, timeout=20, context=ctx) as r:
            out[key] = [r.status, r.read().decode()]
    except urllib.error.HTTPError as e:
        out[key] = [e.code, e.read().decode()]
    except Exception as e:
        out[key] = ["error", f"{type(e).__name__}: {e}"]
print(json.dumps(out))
`;

  it('should reach the allowed hosts over HTTP and HTTPS, and refuse the rest with a 403 naming the rule', async () => {
    const out = await run(
      fetchCode({
        http: `http://allowed.test:${targets.httpPort}/plain`,
        https: `https://allowed.test:${targets.httpsPort}/secure`,
        notListed: 'http://elsewhere.test/',
        ipLiteral: 'http://203.0.113.7/',
        metadata: 'http://169.254.169.254/latest/meta-data/',
        gateway: `http://gateway.test:${gatewayPort}/health/live`,
        postgres: 'http://db.test:5432/',
        httpsNotListed: 'https://elsewhere.test/',
      }),
    );
    expect(out.http).toEqual([200, 'hello /plain']);
    expect(out.https).toEqual([200, 'hello /secure']);
    expect(out.notListed[0]).toBe(403);
    expect(out.notListed[1]).toContain("elsewhere.test:80 is not on this session's allow list");
    expect(out.ipLiteral[0]).toBe(403);
    expect(out.ipLiteral[1]).toContain('is an IP address');
    expect(out.metadata[0]).toBe(403);
    expect(out.gateway[0]).toBe(403);
    expect(out.gateway[1]).toContain("platform's own services");
    expect(out.postgres[0]).toBe(403);
    expect(out.postgres[1]).toContain("platform's own services");
    // A refused tunnel: Python shows the proxy's status line.
    expect(out.httpsNotListed).toEqual(['error', expect.stringContaining("403 Forbidden by Drydock egress policy: elsewhere.test:443 is not on this session's allow list")]);
    expect(targets.requests.map((r) => r.url)).toEqual(expect.arrayContaining(['/plain', '/secure']));

    // Rows are written in batches, a tunnel's once it closed.
    let log = await api.get(`/v1/sessions/${sessionId}/network`);
    await pollUntil(async () => {
      log = await api.get(`/v1/sessions/${sessionId}/network`);
      return log.body.connections.length >= 8;
    }, 10_000, 100, 'eight logged connections');
    expect(log.status).toBe(200);
    expect(log.body.policy).toEqual({ allow });
    const hosts = (verdict: string) => log.body.connections.filter((c: { verdict: string }) => c.verdict === verdict).map((c: { host: string; port: number }) => `${c.host}:${c.port}`);
    expect(hosts('allowed').sort()).toEqual([`allowed.test:${targets.httpPort}`, `allowed.test:${targets.httpsPort}`].sort());
    expect(hosts('denied').sort()).toEqual(
      ['elsewhere.test:80', '203.0.113.7:80', '169.254.169.254:80', `gateway.test:${gatewayPort}`, 'db.test:5432', 'elsewhere.test:443'].sort(),
    );
    const https = log.body.connections.find((c: { port: number }) => c.port === targets.httpsPort);
    expect(https).toMatchObject({ verdict: 'allowed', rule: `allowed.test:${targets.httpsPort}`, address: '127.0.0.1' });
    expect(https.bytesIn).toBeGreaterThan(500);
    expect(https.bytesOut).toBeGreaterThan(200);
  });

  it('should close a tunnel whose TLS names another host than its CONNECT target, and leave raw sockets no path', async () => {
    const out = await run(`
import json, socket, ssl
out = {}
s = socket.create_connection(("127.0.0.1", 3128), timeout=10)
s.sendall(b"CONNECT allowed.test:${targets.httpsPort} HTTP/1.1\\r\\nHost: allowed.test:${targets.httpsPort}\\r\\n\\r\\n")
out["connect"] = s.recv(100).decode().split("\\r\\n")[0]
ctx = ssl.create_default_context()
ctx.check_hostname = False
ctx.verify_mode = ssl.CERT_NONE
try:
    ctx.wrap_socket(s, server_hostname="evil.test").do_handshake()
    out["sni"] = "handshake completed"
except Exception as e:
    out["sni"] = type(e).__name__
for key, target in {"tcp": ("93.184.216.34", 80), "loopbackTarget": ("127.0.0.1", ${targets.httpPort})}.items():
    try:
        socket.create_connection(target, timeout=3)
        out[key] = "connected"
    except OSError as e:
        out[key] = type(e).__name__
try:
    u = socket.socket(socket.AF_INET, socket.SOCK_DGRAM)
    u.sendto(b"x", ("8.8.8.8", 53))
    out["udp"] = "sent"
except OSError as e:
    out["udp"] = type(e).__name__
print(json.dumps(out))
`);
    expect(out.connect).toBe('HTTP/1.1 200 Connection established');
    expect(out.sni).not.toBe('handshake completed');
    expect(out.tcp).not.toBe('connected');
    expect(out.loopbackTarget).not.toBe('connected');
    expect(out.udp).not.toBe('sent');
    let log = await api.get(`/v1/sessions/${sessionId}/network?verdict=denied`);
    await pollUntil(async () => {
      log = await api.get(`/v1/sessions/${sessionId}/network?verdict=denied`);
      return log.body.connections[0]?.port === targets.httpsPort;
    }, 10_000, 100, 'the refused tunnel logged');
    expect(log.body.connections[0]).toMatchObject({ host: 'allowed.test', port: targets.httpsPort, verdict: 'denied', reason: expect.stringContaining('names evil.test') });
  });

  it('should install a package from an allowed index with pip and import it in the same session', async () => {
    const session = await api.createSession({ network: { allow: [`index.test:${targets.indexPort}`] } });
    const out = await run(
      `
import json, subprocess, sys
p = subprocess.run([sys.executable, "-m", "pip", "install", "--index-url", "http://index.test:${targets.indexPort}/simple/", "--trusted-host", "index.test", "${targets.wheel.project}"], capture_output=True, text=True)
import ${targets.wheel.module}
print(json.dumps({"code": p.returncode, "greet": ${targets.wheel.module}.greet(), "where": ${targets.wheel.module}.__file__}))
`,
      api,
      session.id,
    );
    expect(out).toMatchObject({ code: 0, greet: `hello from ${targets.wheel.module}` });
    expect(out.where).toMatch(/^\/opt\/packages\//);
    // A command in the same session sees it too, and the thread's files do not hold it.
    const command = await api.post(`/v1/sessions/${session.id}/commands`, { command: `python3 -c "import ${targets.wheel.module}; print(${targets.wheel.module}.greet())"` });
    expect(command.body).toMatchObject({ exitCode: 0, stdout: `hello from ${targets.wheel.module}\n` });
    const files = await api.get(`/v1/threads/${session.threadId}/files`);
    expect(JSON.stringify(files.body)).not.toContain(targets.wheel.module);
  });

  it('should keep a session without a policy off the network, as before', async () => {
    const session = await api.createSession();
    const out = await run(
      `
import json, os, socket
out = {"proxy": os.environ.get("HTTPS_PROXY")}
try:
    socket.create_connection(("127.0.0.1", 3128), timeout=3)
    out["forwarder"] = "connected"
except OSError as e:
    out["forwarder"] = type(e).__name__
print(json.dumps(out))
`,
      api,
      session.id,
    );
    expect(out).toEqual({ proxy: null, forwarder: 'ConnectionRefusedError' });
    expect((await api.get(`/v1/sessions/${session.id}/network`)).body).toEqual({ policy: null, connections: [], next: null });
  });

  it('should clamp policies to the ceiling, let a tenant only narrow its own, and keep logs to their tenant', async () => {
    const outside = await api.post('/v1/sessions', { network: { allow: ['allowed.test:1', 'pypi.org'] } });
    expect(outside.status).toBe(422);
    expect(outside.body.error).toMatchObject({ code: 'NETWORK_NOT_ALLOWED', details: { entries: ['allowed.test:1', 'pypi.org'] } });
    expect((await api.post('/v1/sessions', { network: { allow: ['bad entry'] } })).body.error.code).toBe('INVALID_NETWORK_POLICY');
    expect((await api.post('/v1/sessions', { network: true })).body.error.code).toBe('NETWORK_FORBIDDEN');
    // Only operators set ceilings.
    expect((await api.request('PATCH', `/admin/tenants/${api.tenantId}`, { json: { limits: { network: { allow: ['*'] } } } })).status).toBe(401);
    // Narrowing applies to the next connection; widening is refused.
    const widened = await api.request('PATCH', `/v1/sessions/${sessionId}/network`, { json: { allow: [...allow, 'more.test'] } });
    expect(widened.status).toBe(422);
    expect(widened.body.error.details).toEqual({ entries: ['more.test'] });
    const narrowed = await api.request('PATCH', `/v1/sessions/${sessionId}/network`, { json: { allow: [`allowed.test:${targets.httpPort}`] } });
    expect(narrowed.status).toBe(200);
    expect(narrowed.body.network).toEqual({ allow: [`allowed.test:${targets.httpPort}`] });
    const out = await run(fetchCode({ http: `http://allowed.test:${targets.httpPort}/again`, https: `https://allowed.test:${targets.httpsPort}/again` }));
    expect(out.http[0]).toBe(200);
    expect(out.https).toEqual(['error', expect.stringContaining('403')]);
    // Another tenant: its own ceiling without the range, so the name resolving to loopback
    // is refused; and the first tenant's session log is not its to read.
    const other = await platform.newTenant({ network: { allow: [`allowed.test:${targets.httpPort}`] } });
    const otherSession = await other.createSession({ network: { allow: [`allowed.test:${targets.httpPort}`] } });
    const refused = await run(fetchCode({ http: `http://allowed.test:${targets.httpPort}/` }), other, otherSession.id);
    expect(refused.http[0]).toBe(403);
    expect(refused.http[1]).toContain('127.0.0.1 is a loopback address');
    expect((await other.get(`/v1/sessions/${sessionId}/network`)).status).toBe(404);
  });

  it('should show operators the log across tenants, the bytes in usage and the counts in metrics', async () => {
    const denied = await platform.admin.get(`/admin/egress?tenantId=${api.tenantId}&verdict=denied&limit=3`);
    expect(denied.status).toBe(200);
    expect(denied.body.connections).toHaveLength(3);
    expect(denied.body.connections.every((c: { verdict: string; tenantId: string }) => c.verdict === 'denied' && c.tenantId === api.tenantId)).toBe(true);
    const next = await platform.admin.get(`/admin/egress?tenantId=${api.tenantId}&verdict=denied&limit=3&before=${denied.body.next}`);
    expect(next.body.connections[0].id < denied.body.connections[2].id || Number(next.body.connections[0].id) < Number(denied.body.connections[2].id)).toBe(true);
    expect((await platform.admin.get('/admin/egress?verdict=maybe')).status).toBe(400);
    const usage = await platform.admin.get(`/admin/usage?tenantId=${api.tenantId}`);
    const today = usage.body.days.find((d: { day: string }) => d.day === new Date().toISOString().slice(0, 10));
    expect(today.egress.bytesIn).toBeGreaterThan(1000);
    expect(today.egress.bytesOut).toBeGreaterThan(100);
    const metrics = await platform.worker.get((await import('@drydock/metrics')).PlatformMetrics).registry.metrics();
    expect(metrics).toMatch(/drydock_egress_connections_total\{verdict="denied"\} [1-9]/);
    expect(metrics).toMatch(/drydock_egress_connections_total\{verdict="allowed"\} [1-9]/);
  });
});
