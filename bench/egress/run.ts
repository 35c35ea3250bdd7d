// bench/egress: the egress proxy against direct requests by the host, in the same run
// (issue 53).
//
//   npm run build && npm run bench:egress -- [options]
//
// - Download: --mb MB from an HTTP server on this machine's loopback, read by Python's
//   urllib in 1 MiB chunks, timed by the reader: in a sandbox through the proxy (the
//   forwarder on the sandbox's loopback, the worker's proxy on its Unix socket), and by
//   the same code on the host straight to the server. Interleaved, --downloads each.
// - Connection set-up: a request for a small response, from opening the connection to
//   the first byte of the body (urllib's urlopen + read(1), a new connection each), the
//   same two ways, --n of each; HTTP and HTTPS (a CONNECT tunnel, TLS to the server).
// - Executions (print(1)) in a session without a policy and in one with: a policy must
//   not slow the REPL, and sessions without one do exactly what they did.
//
// The targets are servers of a child process (test/support/egress-targets.ts) that the
// operator's setting EGRESS_RESOLVE maps bench.test to. In process by default; with
// --url the deployment must have EGRESS_RESOLVE=bench.test=127.0.0.1.
import { execFile, spawn } from 'node:child_process';
import { once } from 'node:events';
import { createInterface } from 'node:readline';
import { writeFileSync, mkdtempSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { promisify } from 'node:util';
import { api, BenchError, createSession, createTenant, deleteTenant, fixed, openTarget, readArgs, runMain, summarize, summaryRow, SUMMARY_HEADERS, table, TARGET_ARGS, wholeNumber } from '../lib/harness.js';

const run = promisify(execFile);

const USAGE = `usage: npm run bench:egress -- [options]
  --mb <n>            size of the download in MB                 (default 50)
  --downloads <n>     downloads of each kind                     (default 5)
  --n <n>             connection set-ups of each kind            (default 50)
  --url <url>         bench this running gateway instead of one in this process
  --admin-key <key>   its admin key (else DRYDOCK_ADMIN_KEY)`;

// The same Python for both sides: `base` is http://bench.test:<port> in the sandbox (the
// proxy from HTTP(S)_PROXY) and http://127.0.0.1:<port> on the host (no proxy).
const downloadCode = (url: string, cafile: string) => `
import json, ssl, time, urllib.request
ctx = ssl.create_default_context(cafile=${JSON.stringify(cafile)})
t = time.perf_counter()
n = 0
with urllib.request.urlopen(${JSON.stringify(url)}, timeout=120, context=ctx) as r:
    while True:
        chunk = r.read(1 << 20)
        if not chunk:
            break
        n += len(chunk)
print(json.dumps({"ms": (time.perf_counter() - t) * 1000, "bytes": n}))
`;

const setupCode = (url: string, n: number, cafile: string) => `
import json, ssl, time, urllib.request
ctx = ssl.create_default_context(cafile=${JSON.stringify(cafile)})
out = []
for _ in range(${n}):
    t = time.perf_counter()
    with urllib.request.urlopen(${JSON.stringify(url)}, timeout=30, context=ctx) as r:
        r.read(1)
        out.append((time.perf_counter() - t) * 1000)
        r.read()
print(json.dumps(out))
`;

async function main() {
  const values = readArgs({ mb: { type: 'string' }, downloads: { type: 'string' }, n: { type: 'string' }, ...TARGET_ARGS }, USAGE);
  const mb = wholeNumber('--mb', values.mb, 50, 1);
  const downloads = wholeNumber('--downloads', values.downloads, 5, 1);
  const n = wholeNumber('--n', values.n, 50, 1);
  // test/support/egress-targets.ts, in a child process.
  const child = spawn(process.execPath, [new URL('./targets-process.js', import.meta.url).pathname, 'bench.test'], { stdio: ['pipe', 'pipe', 'inherit'] });
  const [line] = (await once(createInterface({ input: child.stdout! }), 'line')) as [string];
  const targets = JSON.parse(line) as { httpPort: number; httpsPort: number; certificatePem: string };
  const platform = await openTarget({ url: values.url, adminKey: values['admin-key'] }, { EGRESS_RESOLVE: 'bench.test=127.0.0.1' });
  const hostDir = mkdtempSync(join(tmpdir(), 'bench-egress-'));
  const hostCa = join(hostDir, 'ca.pem');
  writeFileSync(hostCa, targets.certificatePem);
  let tenantId: string | null = null;
  try {
    const allow = [`bench.test:${targets.httpPort}`, `bench.test:${targets.httpsPort}`];
    const tenant = await createTenant(platform, { name: `bench-egress-${Date.now()}`, limits: { network: { allow, ranges: ['127.0.0.1/32'] } } });
    tenantId = tenant.id;
    const withPolicy = await createSession(platform.url, tenant.apiKey, { network: { allow } });
    const without = await createSession(platform.url, tenant.apiKey, {});
    const put = await fetch(`${platform.url}/v1/threads/${withPolicy.view.threadId}/files/content?path=%2Fca.pem`, {
      method: 'PUT',
      headers: { authorization: `Bearer ${tenant.apiKey}`, 'content-type': 'application/octet-stream' },
      body: targets.certificatePem,
    });
    if (put.status >= 300) throw new BenchError(`uploading the certificate answered ${put.status}`);
    const cell = async (sessionId: string, code: string) => {
      const res = await api(platform.url, tenant.apiKey, 'POST', `/v1/sessions/${sessionId}/executions`, { code, timeoutMs: 300_000 });
      if (res.body?.status !== 'ok') throw new BenchError(`the cell answered ${res.status}: ${JSON.stringify(res.body).slice(0, 500)}`);
      return JSON.parse(String(res.body.stdout).trim());
    };
    const host = async (code: string) => {
      const { stdout } = await run('python3', ['-c', code], { env: { ...process.env, http_proxy: '', https_proxy: '', HTTP_PROXY: '', HTTPS_PROXY: '' }, maxBuffer: 1 << 24 });
      return JSON.parse(stdout.trim());
    };
    console.log(`bench/egress: ${platform.mode}; ${downloads} downloads of ${mb} MB and ${n} connection set-ups of each kind`);
    console.log('(the targets are servers of a child process; the host-side client is the same Python code, run by this machine\'s python3 without a proxy)');

    const bytes = mb * 1_000_000;
    // The host reaches bench.test by its address (its resolver does not know the name;
    // TLS still checks the certificate against the name).
    const hostResolves = (code: string) =>
      code.replace(/^\nimport json, /, '\nimport socket\n_g = socket.getaddrinfo\nsocket.getaddrinfo = lambda h, *a, **k: _g("127.0.0.1" if h == "bench.test" else h, *a, **k)\nimport json, ');
    console.log(`\nDownload of ${mb} MB (ms):`);
    const rows: string[][] = [];
    const verdictsDl: string[] = [];
    for (const [label, url] of [
      ['HTTP', `http://bench.test:${targets.httpPort}`],
      ['HTTPS', `https://bench.test:${targets.httpsPort}`],
    ] as const) {
      const proxied: number[] = [];
      const direct: number[] = [];
      await cell(withPolicy.id, downloadCode(`${url}/bytes/1000000`, '/session/ca.pem')); // warm
      for (let i = 0; i < downloads; i++) {
        const a = await cell(withPolicy.id, downloadCode(`${url}/bytes/${bytes}`, '/session/ca.pem'));
        const b = await host(hostResolves(downloadCode(`${url}/bytes/${bytes}`, hostCa)));
        if (a.bytes !== bytes || b.bytes !== bytes) throw new BenchError(`a download came short: ${a.bytes} and ${b.bytes} of ${bytes}`);
        proxied.push(a.ms);
        direct.push(b.ms);
      }
      const rate = (ms: number[]) => bytes / 1e6 / (summarize(ms).p50 / 1000);
      rows.push(summaryRow(`${label}: sandbox through the proxy`, summarize(proxied)), summaryRow(`${label}: host, direct`, summarize(direct)));
      const ratio = rate(proxied) / rate(direct);
      verdictsDl.push(`${label}: ${fixed(rate(proxied), 0)} MB/s through the proxy, ${fixed(rate(direct), 0)} MB/s direct at p50: ${fixed(ratio)}x (target >= 0.5x: ${ratio >= 0.5 ? 'met' : 'MISSED'})`);
    }
    console.log(table(SUMMARY_HEADERS, rows));
    for (const v of verdictsDl) console.log(v);

    const setups: string[][] = [];
    const verdicts: string[] = [];
    for (const [label, sandboxUrl, hostUrl] of [
      ['HTTP', `http://bench.test:${targets.httpPort}/small`, `http://bench.test:${targets.httpPort}/small`],
      ['HTTPS', `https://bench.test:${targets.httpsPort}/small`, `https://bench.test:${targets.httpsPort}/small`],
    ] as const) {
      const hostCode = hostResolves(setupCode(hostUrl, n, hostCa));
      const a: number[] = await cell(withPolicy.id, setupCode(sandboxUrl, n, '/session/ca.pem'));
      const b: number[] = await host(hostCode);
      const sa = summarize(a);
      const sb = summarize(b);
      setups.push(summaryRow(`${label}: sandbox through the proxy`, sa), summaryRow(`${label}: host, direct`, sb));
      const gap = sa.p50 - sb.p50;
      verdicts.push(`${label}: p50 ${fixed(sa.p50)} ms through the proxy vs ${fixed(sb.p50)} ms direct: +${fixed(gap)} ms (target within 5 ms: ${gap <= 5 ? 'met' : 'MISSED'})`);
    }
    console.log('\nConnection set-up to the first byte (ms):');
    console.log(table(SUMMARY_HEADERS, setups));
    for (const v of verdicts) console.log(v);

    const execs = { without: [] as number[], with: [] as number[] };
    for (let i = 0; i < n; i++) {
      for (const [kind, id] of [['without', without.id], ['with', withPolicy.id]] as const) {
        const started = performance.now();
        const res = await api(platform.url, tenant.apiKey, 'POST', `/v1/sessions/${id}/executions`, { code: 'print(1)' });
        if (res.body?.status !== 'ok') throw new BenchError(`print(1) answered ${res.status}`);
        execs[kind].push(performance.now() - started);
      }
    }
    console.log('\nExecutions, print(1) (ms):');
    console.log(table(SUMMARY_HEADERS, [summaryRow('session without a policy', summarize(execs.without)), summaryRow('session with a policy', summarize(execs.with))]));
    console.log(`with / without at p50: ${fixed(summarize(execs.with).p50 / summarize(execs.without).p50)}x`);
  } finally {
    if (tenantId) await deleteTenant(platform, tenantId);
    await platform.close();
    child.stdin!.end();
    rmSync(hostDir, { recursive: true, force: true });
  }
}

runMain('bench/egress', main);
