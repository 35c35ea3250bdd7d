import { execFileSync } from 'node:child_process';
import { createHash } from 'node:crypto';
import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { createServer as createHttpServer, type Server } from 'node:http';
import { createServer as createHttpsServer } from 'node:https';
import type { AddressInfo, Server as NetServer } from 'node:net';
import { tmpdir } from 'node:os';
import { join } from 'node:path';

// Servers on this machine's loopback that sandboxes reach through the egress proxy in
// tests and benchmarks: plain HTTP, HTTPS with a self-signed certificate for the name
// the operator maps to loopback (EGRESS_RESOLVE), and a PEP 503 package index serving one
// wheel built here.
export interface EgressTargets {
  httpPort: number;
  httpsPort: number;
  indexPort: number;
  // The HTTPS server's certificate (PEM), for the sandbox to trust.
  certificatePem: string;
  // The wheel the index serves: `pip install <project>`, then `import <module>`.
  wheel: { project: string; module: string; file: string };
  // Bytes served by GET /bytes/<n> so far, and requests seen.
  requests: { url: string; host: string | undefined }[];
  close(): Promise<void>;
}

const listen = (server: NetServer) =>
  new Promise<number>((resolve) => server.listen(0, '127.0.0.1', () => resolve((server.address() as AddressInfo).port)));

// `GET /bytes/<n>`: n bytes; anything else: "hello <path>".
function respond(req: import('node:http').IncomingMessage, res: import('node:http').ServerResponse, targets: EgressTargets): void {
  targets.requests.push({ url: req.url ?? '', host: req.headers.host });
  const bytes = /^\/bytes\/(\d+)$/.exec(req.url ?? '');
  if (bytes) {
    let left = Number(bytes[1]);
    res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': left });
    const chunk = Buffer.alloc(256 * 1024, 0x61);
    const pump = () => {
      while (left > 0) {
        const part = left >= chunk.length ? chunk : chunk.subarray(0, left);
        left -= part.length;
        if (!res.write(part)) return void res.once('drain', pump);
      }
      res.end();
    };
    return pump();
  }
  res.writeHead(200, { 'content-type': 'text/plain' });
  res.end(`hello ${req.url}`);
}

// A wheel with one module: built with Python's zipfile (a wheel is a zip with a
// dist-info folder, PEP 427).
function buildWheel(dir: string, project: string, module: string): string {
  const file = `${project.replace(/-/g, '_')}-1.0-py3-none-any.whl`;
  const script = `
import base64, hashlib, sys, zipfile
path, project, module = sys.argv[1:4]
dist = project.replace('-', '_') + '-1.0.dist-info'
files = {
  module + '/__init__.py': 'def greet():\\n    return "hello from " + __name__\\n',
  dist + '/METADATA': 'Metadata-Version: 2.1\\nName: ' + project + '\\nVersion: 1.0\\n',
  dist + '/WHEEL': 'Wheel-Version: 1.0\\nGenerator: drydock-tests\\nRoot-Is-Purelib: true\\nTag: py3-none-any\\n',
}
record = []
with zipfile.ZipFile(path, 'w') as z:
  for name, text in files.items():
    data = text.encode()
    z.writestr(name, data)
    digest = base64.urlsafe_b64encode(hashlib.sha256(data).digest()).rstrip(b'=').decode()
    record.append(f'{name},sha256={digest},{len(data)}')
  record.append(dist + '/RECORD,,')
  z.writestr(dist + '/RECORD', '\\n'.join(record) + '\\n')
`;
  execFileSync('python3', ['-c', script, join(dir, file), project, module]);
  return file;
}

export async function startEgressTargets(name: string): Promise<EgressTargets> {
  const dir = mkdtempSync(join(tmpdir(), 'egress-targets-'));
  execFileSync(
    'openssl',
    ['req', '-x509', '-newkey', 'rsa:2048', '-nodes', '-days', '2', '-subj', `/CN=${name}`, '-addext', `subjectAltName=DNS:${name}`, '-keyout', join(dir, 'key.pem'), '-out', join(dir, 'cert.pem')],
    { stdio: 'ignore' },
  );
  const certificatePem = readFileSync(join(dir, 'cert.pem'), 'utf8');
  const project = 'drydock-hello';
  const module = 'drydock_hello';
  const file = buildWheel(dir, project, module);
  const wheelBytes = readFileSync(join(dir, file));
  const sha256 = createHash('sha256').update(wheelBytes).digest('hex');
  const targets: EgressTargets = {
    httpPort: 0,
    httpsPort: 0,
    indexPort: 0,
    certificatePem,
    wheel: { project, module, file },
    requests: [],
    close: async () => undefined,
  };
  const http = createHttpServer((req, res) => respond(req, res, targets));
  const https = createHttpsServer({ key: readFileSync(join(dir, 'key.pem')), cert: certificatePem }, (req, res) => respond(req, res, targets));
  // PEP 503: /simple/<project>/ lists its files with their hashes.
  const index = createHttpServer((req, res) => {
    targets.requests.push({ url: req.url ?? '', host: req.headers.host });
    if (req.url === `/simple/${project}/`) {
      res.writeHead(200, { 'content-type': 'text/html' });
      return void res.end(`<!DOCTYPE html><html><body><a href="/files/${file}#sha256=${sha256}">${file}</a></body></html>`);
    }
    if (req.url === `/files/${file}`) {
      res.writeHead(200, { 'content-type': 'application/octet-stream', 'content-length': wheelBytes.length });
      return void res.end(wheelBytes);
    }
    res.writeHead(404);
    res.end();
  });
  targets.httpPort = await listen(http);
  targets.httpsPort = await listen(https);
  targets.indexPort = await listen(index);
  targets.close = async () => {
    for (const s of [http, https, index]) {
      s.closeAllConnections();
      await new Promise((r) => s.close(r));
    }
    rmSync(dir, { recursive: true, force: true });
  };
  return targets;
}
