import { chmod, chown, rm } from 'node:fs/promises';
import { createServer as createHttpServer, type IncomingHttpHeaders, type IncomingMessage, type ServerResponse } from 'node:http';
import { connect, createServer as createNetServer, type Socket } from 'node:net';
import { matchingEntry, normalizeHostName, normalizeIp, type AllowEntry } from '../policy/allow-entries.js';
import { addressRefusal } from '../policy/address-rules.js';
import type { EgressResolver, PlatformEndpoints } from './egress-resolver.js';
import type { EgressPolicySource, EgressSink, EgressSubject } from './egress-types.js';
import { MAX_CLIENT_HELLO_BYTES, readClientHello } from './tls-client-hello.js';

export interface EgressProxyOptions {
  policies: EgressPolicySource;
  sink: EgressSink;
  resolver: EgressResolver;
  platform: PlatformEndpoints;
  connectTimeoutMs: number;
  workerId: string;
}

// One sandbox's end of the proxy: a Unix socket only that sandbox's forwarder reaches.
export interface EgressListener {
  readonly socketPath: string;
  close(): Promise<void>;
}

interface Binding {
  subject: () => EgressSubject;
  // Its client connections and the upstream connections opened for them.
  sockets: Set<Socket>;
}

type Decision =
  | { ok: true; address: string; rule: AllowEntry; host: string }
  | { ok: false; address: string | null; reason: string };

const UPSTREAM_READ_BYTES = 1024 * 1024;

// Headers of one hop, never forwarded (RFC 9110 7.6.1), and the proxy's own.
const HOP_BY_HOP = ['connection', 'keep-alive', 'proxy-connection', 'proxy-authorization', 'proxy-authenticate', 'te', 'trailer', 'transfer-encoding', 'upgrade'];

// The platform's egress proxy (docs/network.md, docs/decisions/017-egress-proxy.md): an
// HTTP forward proxy, on one Unix socket per sandbox, that decides each connection by the
// sandbox's policy. Plain HTTP comes as absolute-form requests (the Host header must name
// the URL's host); HTTPS and anything else as CONNECT, whose tunnel must start with a TLS
// ClientHello naming the CONNECT target (SNI). The name is resolved here, every address
// checked (public unicast, or a range an operator allowed; never the platform's own
// services), and the connection made to the address checked. Each attempt is recorded.
export class EgressProxy {
  private readonly http = createHttpServer({ requestTimeout: 0, headersTimeout: 30_000, maxHeaderSize: 32 * 1024 });
  private readonly bindings = new WeakMap<Socket, Binding>();
  private readonly listeners = new Set<EgressListener>();
  // Client connections whose current response is relayed raw (plain HTTP).
  private readonly raw = new WeakSet<Socket>();

  constructor(private readonly options: EgressProxyOptions) {
    this.http.on('request', (req: IncomingMessage, res: ServerResponse) => void this.onRequest(req, res));
    this.http.on('connect', (req: IncomingMessage, socket: Socket, head: Buffer) => void this.onConnect(req, socket, head));
    this.http.on('clientError', (_error: Error, socket: Socket) => {
      if (socket.writable) socket.end('HTTP/1.1 400 Bad Request\r\nConnection: close\r\nContent-Length: 0\r\n\r\n');
      else socket.destroy();
    });
  }

  // Listens on `socketPath` for one sandbox; the socket file is made the owner's (the
  // sandbox's supervisor user), mode 0600.
  async listen(socketPath: string, subject: () => EgressSubject, owner?: { uid: number; gid: number }): Promise<EgressListener> {
    await rm(socketPath, { force: true });
    const binding: Binding = { subject, sockets: new Set() };
    const server = createNetServer({ allowHalfOpen: true }, (socket) => {
      socket.on('error', () => undefined);
      this.bindings.set(socket, binding);
      this.track(binding, socket);
      this.http.emit('connection', socket);
    });
    await new Promise<void>((resolve, reject) => {
      server.once('error', reject);
      server.listen(socketPath, () => resolve());
    });
    await chmod(socketPath, 0o600);
    if (owner) await chown(socketPath, owner.uid, owner.gid);
    const listener: EgressListener = {
      socketPath,
      close: async () => {
        this.listeners.delete(listener);
        await new Promise<void>((resolve) => {
          server.close(() => resolve());
          for (const s of binding.sockets) s.destroy();
        });
        await rm(socketPath, { force: true });
      },
    };
    this.listeners.add(listener);
    return listener;
  }

  async closeAll(): Promise<void> {
    await Promise.all([...this.listeners].map((l) => l.close()));
  }

  private track(binding: Binding, socket: Socket): void {
    binding.sockets.add(socket);
    socket.once('close', () => binding.sockets.delete(socket));
  }

  // Plain HTTP: `GET http://host/path HTTP/1.1`.
  private async onRequest(req: IncomingMessage, res: ServerResponse): Promise<void> {
    const binding = this.bindings.get(req.socket);
    // A request pipelined behind one whose response is relayed raw: the connection is
    // closing.
    if (!binding || this.raw.has(req.socket)) return void res.destroy();
    const startedAt = new Date();
    let url: URL | null = null;
    try {
      url = new URL(req.url ?? '');
    } catch {
      url = null;
    }
    if (!url || url.protocol !== 'http:') {
      const body = url
        ? `Drydock egress proxy: ${url.protocol} URLs go through CONNECT (HTTPS_PROXY), not as a plain request.\n`
        : 'Drydock egress proxy: send absolute URLs (HTTP_PROXY) or CONNECT host:port (HTTPS_PROXY).\n';
      res.writeHead(400, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body) });
      return void res.end(body);
    }
    const port = url.port ? Number(url.port) : 80;
    const host = url.hostname.replace(/^\[|\]$/g, '');
    const subject = binding.subject();
    const named = hostHeaderOf(req.headers);
    let decision: Decision;
    if (named !== null && !sameHost(named, host, port)) {
      decision = { ok: false, address: null, reason: `the Host header (${named}) does not name the URL's host (${url.host})` };
    } else {
      decision = await this.decide(subject, host, port);
    }
    if (!decision.ok) {
      this.recordDenied(subject, host, port, decision, startedAt);
      const { reason, body } = refusalText(host, port, decision.reason);
      res.writeHead(403, reason, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), 'x-drydock-egress': 'denied' });
      return void res.end(body);
    }
    // The exchange goes raw from here: the request head rewritten (origin-form, no
    // hop-by-hop or proxy headers, `Connection: close`), its body, then the upstream's
    // bytes straight back, and the client connection closes after the response. No
    // second request can follow on it to another host.
    this.raw.add(req.socket);
    const client = req.socket;
    let failure: string | null = null;
    let opened = false;
    let finished = false;
    const up = openUpstream(decision.address, port);
    const upstream = up.socket;
    this.track(binding, upstream);
    const timer = setTimeout(() => upstream.destroy(new Error(`no connection within ${this.options.connectTimeoutMs} ms`)), this.options.connectTimeoutMs);
    upstream.once('connect', () => {
      clearTimeout(timer);
      opened = true;
      const chunked = /\bchunked\b/i.test(String(req.headers['transfer-encoding'] ?? ''));
      upstream.write(requestHead(req, `${url.pathname}${url.search}`, chunked));
      up.deliverTo(client);
      if (chunked) {
        req.on('data', (chunk: Buffer) => upstream.write(Buffer.concat([Buffer.from(`${chunk.length.toString(16)}\r\n`), chunk, Buffer.from('\r\n')])));
        req.once('end', () => upstream.write('0\r\n\r\n'));
      } else {
        req.pipe(upstream, { end: false });
      }
    });
    upstream.on('error', (error: Error) => {
      clearTimeout(timer);
      failure = `the upstream failed: ${error.message}`;
      if (opened) return void client.destroy();
      const body = `Drydock egress proxy: ${decision.host}:${port} (${decision.address}) could not be reached: ${error.message}\n`;
      res.writeHead(502, { 'content-type': 'text/plain; charset=utf-8', 'content-length': Buffer.byteLength(body), connection: 'close' });
      res.end(body);
    });
    upstream.once('close', () => {
      clearTimeout(timer);
      if (opened) client.end();
      if (finished) return;
      finished = true;
      this.options.sink.record({
        ...this.base(subject, decision.host, port, startedAt),
        address: decision.address,
        verdict: 'allowed',
        reason: failure ? `allowed by "${decision.rule.text}"; ${failure}` : `allowed by "${decision.rule.text}"`,
        rule: decision.rule.text,
        bytesIn: upstream.bytesRead,
        bytesOut: upstream.bytesWritten,
      });
    });
    client.once('close', () => upstream.destroy());
  }

  // `CONNECT host:port`: a tunnel, which must carry TLS for that host.
  private async onConnect(req: IncomingMessage, client: Socket, head: Buffer): Promise<void> {
    client.on('error', () => undefined);
    const binding = this.bindings.get(client);
    if (!binding) return void client.destroy();
    const startedAt = new Date();
    const subject = binding.subject();
    const target = /^(\[[^\]]+\]|[^:[\]]+):(\d{1,5})$/.exec(req.url ?? '');
    const host = (target?.[1] ?? req.url ?? '').replace(/^\[|\]$/g, '');
    const port = Number(target?.[2] ?? 0);
    const decision: Decision =
      target && port >= 1 && port <= 65535
        ? await this.decide(subject, host, port)
        : { ok: false, address: null, reason: `"${req.url}" is not host:port` };
    if (!decision.ok) {
      this.recordDenied(subject, host, port, decision, startedAt);
      const { reason, body } = refusalText(host, port, decision.reason);
      return void client.end(
        `HTTP/1.1 403 ${reason}\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nX-Drydock-Egress: denied\r\nConnection: close\r\n\r\n${body}`,
      );
    }
    const up = openUpstream(decision.address, port);
    const upstream = up.socket;
    this.track(binding, upstream);
    upstream.setNoDelay(true);
    client.setNoDelay(true);
    let settled = false;
    const record = (verdict: 'allowed' | 'denied', reason: string) => {
      if (settled) return;
      settled = true;
      this.options.sink.record({
        ...this.base(subject, decision.host, port, startedAt),
        address: decision.address,
        verdict,
        reason,
        rule: verdict === 'allowed' ? decision.rule.text : null,
        bytesIn: upstream.bytesRead,
        bytesOut: upstream.bytesWritten,
      });
    };
    const timer = setTimeout(() => upstream.destroy(new Error(`no connection within ${this.options.connectTimeoutMs} ms`)), this.options.connectTimeoutMs);
    let tunnelOpen = false;
    upstream.on('error', (error: Error) => {
      clearTimeout(timer);
      if (tunnelOpen) return void client.destroy();
      const body = `Drydock egress proxy: ${decision.host}:${port} (${decision.address}) could not be reached: ${error.message}\n`;
      client.end(`HTTP/1.1 502 Bad Gateway\r\nContent-Type: text/plain; charset=utf-8\r\nContent-Length: ${Buffer.byteLength(body)}\r\nConnection: close\r\n\r\n${body}`);
      record('allowed', `allowed by "${decision.rule.text}"; the upstream could not be reached: ${error.message}`);
    });
    upstream.once('connect', () => {
      clearTimeout(timer);
      tunnelOpen = true;
      upstream.once('close', () => {
        client.destroy();
        record('allowed', `allowed by "${decision.rule.text}"`);
      });
      client.once('close', () => upstream.destroy());
      client.write('HTTP/1.1 200 Connection established\r\n\r\n');
      void this.checkHello(client, head, decision.host).then((problem) => {
        if (problem) {
          record('denied', problem);
          client.destroy();
          upstream.destroy();
          return;
        }
        // Half-closes pass through: each side's end() ends the other's writing side.
        client.pipe(upstream);
        up.deliverTo(client);
      });
    });
  }

  // Reads the tunnel's first bytes until its ClientHello is whole, writes them to the
  // client's socket's read queue again, and says what is wrong with it (null: it names
  // `host`).
  private checkHello(client: Socket, head: Buffer, host: string): Promise<string | null> {
    return new Promise((resolve) => {
      let data = head;
      const timer = setTimeout(() => done(`no TLS ClientHello within ${this.options.connectTimeoutMs} ms`), this.options.connectTimeoutMs);
      const done = (problem: string | null) => {
        clearTimeout(timer);
        client.off('data', onData);
        client.off('close', onClose);
        client.pause();
        if (!problem && data.length) client.unshift(data);
        resolve(problem);
      };
      const check = () => {
        const hello = readClientHello(data);
        if (hello.kind === 'incomplete') {
          if (data.length > MAX_CLIENT_HELLO_BYTES) done('the TLS ClientHello is too large');
          return;
        }
        if (hello.kind === 'not-tls') return done(`a CONNECT tunnel must carry TLS to ${host}; plain HTTP goes as an absolute-URL request (HTTP_PROXY)`);
        const named = hello.serverName === null ? null : normalizeHostName(hello.serverName);
        if (named === host) return done(null);
        if (hello.serverName === null && normalizeIp(host)) return done(null);
        done(
          hello.serverName === null
            ? `the TLS ClientHello names no server (SNI) for ${host}`
            : `the TLS ClientHello names ${hello.serverName.slice(0, 253)}, not the CONNECT target ${host}`,
        );
      };
      const onData = (chunk: Buffer) => {
        data = Buffer.concat([data, chunk]);
        check();
      };
      const onClose = () => done('the client closed the tunnel before sending a TLS ClientHello');
      client.on('data', onData);
      client.once('close', onClose);
      if (data.length) check();
    });
  }

  private async decide(subject: EgressSubject, rawHost: string, port: number): Promise<Decision> {
    const ip = normalizeIp(rawHost);
    const name = ip ? null : normalizeHostName(rawHost);
    const host = ip ?? name;
    if (!host) return { ok: false, address: null, reason: `"${rawHost.slice(0, 100)}" is not a host name or an IP address` };
    let policy;
    try {
      policy = await this.options.policies.policyFor(subject);
    } catch (error) {
      return { ok: false, address: null, reason: `the session's policy could not be read (${(error as Error).message}); try again` };
    }
    if (!policy) return { ok: false, address: null, reason: 'this session has no network access' };
    const rule = matchingEntry(policy.entries, host, port, ip !== null);
    if (!rule) {
      const list = policy.entries.map((e) => e.text).join(', ') || 'empty';
      return {
        ok: false,
        address: ip,
        reason: ip
          ? `${host} is an IP address, and only addresses on the allow list may be reached (allow list: ${list})`
          : `${host}:${port} is not on this ${subject.batchId ? 'batch' : 'session'}'s allow list (${list})`,
      };
    }
    let addresses: string[];
    try {
      addresses = ip ? [ip] : await this.options.resolver.resolve(host);
    } catch (error) {
      return { ok: false, address: null, reason: `${host} could not be resolved (${(error as Error).message})` };
    }
    let refusal = `${host} has no address`;
    for (const address of addresses) {
      if (this.options.platform.isPlatform(address, port)) {
        refusal = `${address}:${port} is one of the platform's own services`;
        continue;
      }
      const why = addressRefusal(address, policy.ranges);
      if (!why) return { ok: true, address, rule, host };
      refusal = ip ? why : `${host} resolves to ${why}`;
    }
    return { ok: false, address: addresses[0] ?? null, reason: refusal };
  }

  private base(subject: EgressSubject, host: string, port: number, startedAt: Date) {
    return {
      tenantId: subject.tenantId,
      sessionId: subject.sessionId,
      batchId: subject.batchId ?? null,
      batchItem: subject.batchItem ?? null,
      workerId: this.options.workerId,
      host: host.slice(0, 253),
      port,
      startedAt,
      durationMs: Date.now() - startedAt.getTime(),
    };
  }

  private recordDenied(subject: EgressSubject, host: string, port: number, decision: { address: string | null; reason: string }, startedAt: Date): void {
    this.options.sink.record({
      ...this.base(subject, host.toLowerCase(), port, startedAt),
      address: decision.address,
      verdict: 'denied',
      reason: decision.reason,
      rule: null,
      bytesIn: 0,
      bytesOut: 0,
    });
  }
}

// An upstream connection read into one 1 MiB buffer (libuv's reads are otherwise 64 KiB
// each: a download costs the proxy a sixteenth of the reads), its bytes written to the
// client given to deliverTo, with back-pressure; until then they wait.
function openUpstream(host: string, port: number): { socket: Socket; deliverTo(client: Socket): void } {
  let sink: Socket | null = null;
  const early: Buffer[] = [];
  const socket: Socket = connect({
    host,
    port,
    allowHalfOpen: true,
    noDelay: true,
    onread: {
      buffer: Buffer.allocUnsafe(UPSTREAM_READ_BYTES),
      callback: (bytes: number, buffer: Uint8Array) => {
        const chunk = Buffer.from(buffer.subarray(0, bytes));
        if (!sink) {
          early.push(chunk);
        } else if (!sink.write(chunk)) {
          socket.pause();
          sink.once('drain', () => socket.resume());
        }
        return true;
      },
    },
  });
  return {
    socket,
    deliverTo(client: Socket) {
      sink = client;
      for (const chunk of early.splice(0)) client.write(chunk);
      if (socket.readableEnded) client.end();
      else socket.once('end', () => client.end());
    },
  };
}

// The request as the upstream gets it: origin-form, the client's headers but the hop-by-
// hop and proxy ones, and `Connection: close`.
function requestHead(req: IncomingMessage, path: string, chunked: boolean): string {
  const drop = new Set([...HOP_BY_HOP, ...String(req.headers.connection ?? '').split(',').map((h) => h.trim().toLowerCase())]);
  const lines = [`${req.method} ${path} HTTP/${req.httpVersion === '1.0' ? '1.0' : '1.1'}`];
  for (let i = 0; i + 1 < req.rawHeaders.length; i += 2) {
    if (!drop.has(req.rawHeaders[i]!.toLowerCase())) lines.push(`${req.rawHeaders[i]}: ${req.rawHeaders[i + 1]}`);
  }
  if (chunked) lines.push('Transfer-Encoding: chunked');
  lines.push('Connection: close');
  return `${lines.join('\r\n')}\r\n\r\n`;
}

function hostHeaderOf(headers: IncomingHttpHeaders): string | null {
  const value = headers.host;
  return typeof value === 'string' && value ? value.toLowerCase() : null;
}

function sameHost(header: string, host: string, port: number): boolean {
  const match = /^(\[[^\]]+\]|[^:]+)(?::(\d+))?$/.exec(header);
  if (!match) return false;
  const named = match[1]!.replace(/^\[|\]$/g, '').replace(/\.$/, '');
  return named === host.toLowerCase().replace(/\.$/, '') && (match[2] ? Number(match[2]) : 80) === port;
}

// The status line's reason phrase (what Python's http.client shows for a refused
// tunnel: "Tunnel connection failed: 403 ...") and the body, both naming the rule.
function refusalText(host: string, port: number, why: string): { reason: string; body: string } {
  const reason = `Forbidden by Drydock egress policy: ${why}`.replace(/[^\x20-\x7e]/g, '?').slice(0, 300);
  const body = `Drydock egress proxy refused ${host.slice(0, 253)}:${port}: ${why}.\nA session or batch reaches only the hosts of its network policy (network.allow), within its tenant's ceiling; see docs/network.md.\n`;
  return { reason, body };
}
