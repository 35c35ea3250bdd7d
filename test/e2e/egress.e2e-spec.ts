import { createServer, type AddressInfo } from 'node:net';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { AGENT_RUNTIME, ScriptedModelProvider, type AgentRuntime, type ChatScript } from '@drydock/agents';
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
  // The agent's model, scripted per test.
  let script: ChatScript = () => new AIMessage('no script');

  beforeAll(async () => {
    targets = await startEgressTargets('allowed.test');
    gatewayPort = await freePort();
    platform = await startPlatform(
      {
        GATEWAY_PORT: String(gatewayPort),
        EGRESS_RESOLVE: 'allowed.test=127.0.0.1,index.test=127.0.0.1,gateway.test=127.0.0.1,db.test=127.0.0.1',
      },
      { chatModels: new ScriptedModelProvider(() => (turn) => script(turn)) },
    );
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

  it("should run a batch's items with its policy, clamped at submission, and log each connection as its item's", async () => {
    const outside = await api.post('/v1/batches', { network: { allow: ['pypi.org'] }, items: [{ code: '1' }] });
    expect([outside.status, outside.body.error?.code, outside.body.error?.details]).toEqual([422, 'NETWORK_NOT_ALLOWED', { entries: ['pypi.org'] }]);
    expect((await api.post('/v1/batches', { network: true, items: [{ code: '1' }] })).body.error.code).toBe('NETWORK_FORBIDDEN');
    const network = { allow: [`allowed.test:${targets.httpPort}`] };
    const items = [0, 1, 2].map((i) => ({ code: fetchCode({ ok: `http://allowed.test:${targets.httpPort}/item-${i}`, no: 'http://more.test/' }) }));
    const submitted = await api.post('/v1/batches', { network, concurrency: 1, items });
    expect(submitted.status).toBe(202);
    const id = submitted.body.id as string;
    await pollUntil(async () => (await api.get(`/v1/batches/${id}`)).body.status === 'completed', 120_000, 250, 'the batch to complete');
    expect((await api.get(`/v1/batches/${id}`)).body.network).toEqual(network);
    const results = String((await api.get(`/v1/batches/${id}/results`)).body).trimEnd().split('\n').map((l) => JSON.parse(l));
    for (const [i, row] of results.entries()) {
      expect(row.status).toBe('ok');
      const out = JSON.parse(row.stdout.trim());
      expect(out.ok).toEqual([200, expect.stringContaining(`/item-${i}`)]);
      expect(out.no).toEqual([403, expect.stringContaining("more.test:80 is not on this batch's allow list")]);
    }
    const log = async () => (await platform.admin.get(`/admin/egress?batchId=${id}`)).body.connections as { batchItem: number; verdict: string; host: string; sessionId: string | null }[];
    await pollUntil(async () => (await log()).length === 6, 10_000, 100, "the batch's six connections in the log");
    const byItem = (await log()).map((c) => [c.batchItem, c.verdict, c.host, c.sessionId]).sort();
    expect(byItem).toEqual([
      [0, 'allowed', 'allowed.test', null],
      [0, 'denied', 'more.test', null],
      [1, 'allowed', 'allowed.test', null],
      [1, 'denied', 'more.test', null],
      [2, 'allowed', 'allowed.test', null],
      [2, 'denied', 'more.test', null],
    ]);
  });

  it("should start an agent's sessions with its definition's policy and give the model a refusal it can act on", async () => {
    const outside = await api.post('/v1/agents', { name: 'wide', network: { allow: ['pypi.org'] } });
    expect([outside.status, outside.body.error?.code]).toEqual([422, 'NETWORK_NOT_ALLOWED']);
    const created = await api.post('/v1/agents', { name: 'fetcher', tools: ['execute_python'], network: { allow: [`allowed.test:${targets.httpPort}`] } });
    expect([created.status, created.body.network]).toEqual([201, { allow: [`allowed.test:${targets.httpPort}`] }]);
    const code = fetchCode({ ok: `http://allowed.test:${targets.httpPort}/agent`, no: 'http://more.test/' });
    let instructions = '';
    script = (turn) => {
      instructions = String(turn.messages[0]?.content ?? '');
      return turn.step === 0
        ? new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'execute_python', args: { code }, type: 'tool_call' }] })
        : new AIMessage('done');
    };
    const runtime = platform.gateway.get<AgentRuntime>(AGENT_RUNTIME);
    const config = await runtime.runConfig(api.tenantId, 'fetch-thread', created.body.id);
    const state = (await runtime.graph.invoke({ messages: [new HumanMessage('fetch')] }, config)) as { messages: BaseMessage[] };
    expect(instructions).toContain(`allowed.test:${targets.httpPort}`);
    const tool = state.messages.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
    const out = JSON.parse(String(tool.content).split('\n').find((l) => l.startsWith('{'))!);
    expect(out.ok[0]).toBe(200);
    expect(out.no).toEqual([403, expect.stringMatching(/^Drydock egress proxy refused more\.test:80: more\.test:80 is not on this session's allow list/)]);
    const session = (await api.get('/v1/sessions')).body.sessions.find((s: { threadId: string }) => s.threadId === 'fetch-thread');
    expect(session.network).toEqual({ allow: [`allowed.test:${targets.httpPort}`] });
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
