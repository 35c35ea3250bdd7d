import { spawn } from 'node:child_process';
import { MAX_JSON_DEPTH } from '@drydock/core';
import { startPlatform, type Platform } from './support/platform.js';
import type { ApiClient } from './support/api-client.js';

const LIMIT = 1024 * 1024;

// What Python's http.client (so `requests`, and most agent code) makes of a request: it
// sends the whole body before it reads anything, so an answer sent while it is still
// sending is lost if the gateway then closes the connection (BrokenPipeError).
interface PythonResult {
  status?: number;
  body?: { error?: { code?: string } };
  error?: string;
}

const PYTHON_CLIENT = String.raw`
import http.client, io, json, sys, tarfile
args = json.loads(sys.argv[1])
size = args['size']
head = args['head'].encode()
tail = args['tail'].encode()
if args['tar']:
    # A valid archive of files each under the file limit, over the archive limit as a whole.
    out = io.BytesIO()
    with tarfile.open(fileobj=out, mode='w') as tar:
        for i in range(size // 500_000):
            entry = tarfile.TarInfo('f%d.bin' % i)
            entry.size = 500_000
            tar.addfile(entry, io.BytesIO(b'x' * entry.size))
    data = out.getvalue()
else:
    fill = args['fill'].encode()
    data = head + (fill * ((size - len(head) - len(tail)) // len(fill) + 1))[:size - len(head) - len(tail)] + tail
headers = {'Content-Type': args['type'], 'Authorization': 'Bearer ' + args['key']}
body = data
if args['chunked']:
    # An iterable body without a length: http.client sends it chunked.
    body = (data[i:i + 65536] for i in range(0, len(data), 65536))
conn = http.client.HTTPConnection(args['host'], args['port'], timeout=60)
try:
    conn.request(args['method'], args['path'], body=body, headers=headers, encode_chunked=args['chunked'])
    res = conn.getresponse()
    text = res.read().decode()
    print(json.dumps({'status': res.status, 'body': json.loads(text) if text else None}))
except Exception as e:
    print(json.dumps({'error': type(e).__name__ + ': ' + str(e)}))
`;

function pythonRequest(
  url: string,
  args: { method: string; path: string; type: string; key: string; size: number; head?: string; tail?: string; fill?: string; tar?: boolean; chunked?: boolean },
): Promise<PythonResult> {
  const { hostname, port } = new URL(url);
  const input = JSON.stringify({ ...args, host: hostname, port: Number(port), head: args.head ?? '', tail: args.tail ?? '', fill: args.fill ?? 'x', tar: args.tar ?? false, chunked: args.chunked ?? false });
  return new Promise((resolve, reject) => {
    const child = spawn('python3', ['-c', PYTHON_CLIENT, input], { stdio: ['ignore', 'pipe', 'inherit'] });
    let out = '';
    child.stdout.on('data', (chunk: Buffer) => (out += chunk.toString()));
    child.on('error', reject);
    child.on('close', () => {
      try {
        resolve(JSON.parse(out) as PythonResult);
      } catch {
        reject(new Error(`python3 printed ${JSON.stringify(out)}`));
      }
    });
  });
}

const nested = (depth: number, inner = '1') => '['.repeat(depth) + inner + ']'.repeat(depth);

// Issue 57, bounds on input: JSON nested past the depth limit, NDJSON lines past the
// line limit, and bodies over their limits as a client that does not read while it sends
// sees them.
describe('Input bounds', () => {
  let platform: Platform;
  let api: ApiClient;
  let key: string;

  beforeAll(async () => {
    platform = await startPlatform({
      GATEWAY_MAX_BODY_BYTES: String(LIMIT),
      VFS_MAX_FILE_BYTES: String(LIMIT),
      VFS_MAX_ARCHIVE_BYTES: String(LIMIT),
      BATCH_MAX_BODY_BYTES: String(4 * LIMIT),
      BATCH_MAX_CODE_BYTES: '1000',
      BATCH_MAX_ITEM_FILE_BYTES: '1000',
    });
    const tenant = await platform.admin.post('/admin/tenants', { name: `bounds-${Date.now()}` });
    key = tenant.body.apiKey;
    api = platform.anonymous.withKey(key);
  });

  afterAll(async () => {
    await platform?.close();
  });

  describe('JSON nested too deep', () => {
    const routes: [string, string, (deep: string) => string][] = [
      ['POST', '/v1/sessions', (deep) => `{"metadata":{"a":${deep}}}`],
      ['POST', '/v1/sessions/s-unknown/executions', (deep) => `{"code":"1","x":${deep}}`],
      ['POST', '/v1/batches', (deep) => `{"items":[{"code":"1"}],"metadata":{"a":${deep}}}`],
      ['POST', '/v1/agents', (deep) => `{"name":"a","x":${deep}}`],
      ['POST', '/v1/threads/t1/files/grep', (deep) => `{"pattern":"a","x":${deep}}`],
      ['POST', '/threads', (deep) => `{"metadata":{"a":${deep}}}`],
      ['POST', '/threads/t1/runs/wait', (deep) => `{"assistant_id":"agent","input":{"messages":${deep}}}`],
      ['POST', '/assistants/search', (deep) => `{"metadata":${deep}}`],
      ['POST', '/mcp', (deep) => `{"jsonrpc":"2.0","id":1,"method":"tools/call","params":{"arguments":${deep}}}`],
      ['POST', '/admin/tenants', (deep) => `{"name":"x","limits":${deep}}`],
    ];

    it.each(routes)('should refuse %s %s with 400 JSON_TOO_DEEP at any depth past the limit', async (method, path, body) => {
      for (const depth of [10_000, 3_000, MAX_JSON_DEPTH + 1]) {
        const res = await api.request(method, path, {
          body: body(nested(depth)),
          headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
        });
        expect({ depth, status: res.status, code: res.body?.error?.code }).toEqual({ depth, status: 400, code: 'JSON_TOO_DEEP' });
        expect(res.body.error.details).toEqual({ maxDepth: MAX_JSON_DEPTH });
      }
    });

    it('should count brackets in strings as text, and take JSON nested up to the limit', async () => {
      const created = await api.request('POST', '/threads', {
        // 2 levels (the body, metadata) + the rest: exactly the limit.
        body: `{"metadata":{"a":${nested(MAX_JSON_DEPTH - 2, '"[[[[{{{{"')}, "b": "${'['.repeat(5000)}"}}`,
        headers: { 'content-type': 'application/json' },
      });
      expect(created.status).toBe(200);
      expect(JSON.stringify(created.body.metadata.a).length).toBeGreaterThan(2 * MAX_JSON_DEPTH);
    });

    it('should refuse an NDJSON batch line nested too deep, naming the line', async () => {
      const res = await api.request('POST', '/v1/batches', {
        body: `{}\n{"code":"1"}\n{"code":"2","files":{"/a":${nested(10_000)}}}\n`,
        headers: { 'content-type': 'application/x-ndjson' },
      });
      expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 400, code: 'JSON_TOO_DEEP' });
      expect(res.body.error.details).toEqual({ line: 3, index: 1, maxDepth: MAX_JSON_DEPTH });
      const options = await api.request('POST', '/v1/batches', {
        body: `{"metadata":{"a":${nested(3_000)}}}\n{"code":"1"}\n`,
        headers: { 'content-type': 'application/x-ndjson' },
      });
      expect({ status: options.status, code: options.body?.error?.code }).toEqual({ status: 400, code: 'JSON_TOO_DEEP' });
    });
  });

  describe('NDJSON lines', () => {
    it('should refuse a line past the line limit with 413 NDJSON_LINE_TOO_LONG', async () => {
      // 3 × (1000 + 1000) + 1 MiB with the settings above, under the 4 MiB body limit.
      const res = await api.request('POST', '/v1/batches', {
        body: `{}\n{"code":"${'x'.repeat(2 * LIMIT)}"}\n`,
        headers: { 'content-type': 'application/x-ndjson' },
      });
      expect({ status: res.status, code: res.body?.error?.code }).toEqual({ status: 413, code: 'NDJSON_LINE_TOO_LONG' });
      expect(res.body.error.details).toEqual({ line: 2, maxLineBytes: 3 * 2000 + LIMIT });
    });
  });

  // Each route refuses 20 MB against its limit (1 MiB, a batch 4 MiB); the client is Python's http.client,
  // sending the body with a Content-Length and chunked.
  describe('a body over its limit, sent by Python', () => {
    const SIZE = 20 * 1024 * 1024;
    const cases: { name: string; method: string; path: string; type: string; head?: string; tail?: string; fill?: string; tar?: boolean; code: string; status: number }[] = [
      { name: 'a JSON body', method: 'POST', path: '/v1/sessions/s-unknown/executions', type: 'application/json', head: '{"code":"', tail: '"}', code: 'BODY_TOO_LARGE', status: 413 },
      { name: 'a file upload', method: 'PUT', path: '/v1/threads/bounds/files/content?path=/big.bin', type: 'application/octet-stream', code: 'FILE_TOO_LARGE', status: 413 },
      { name: 'an archive upload', method: 'POST', path: '/v1/threads/bounds/files/archive', type: 'application/x-tar', tar: true, code: 'BODY_TOO_LARGE', status: 413 },
      { name: 'an NDJSON batch', method: 'POST', path: '/v1/batches', type: 'application/x-ndjson', head: '{}\n', fill: `{"code":"${'x'.repeat(900)}"}\n`, code: 'BODY_TOO_LARGE', status: 413 },
      { name: 'an NDJSON line', method: 'POST', path: '/v1/batches', type: 'application/x-ndjson', head: '{}\n', code: 'NDJSON_LINE_TOO_LONG', status: 413 },
    ];

    it.each(cases.flatMap((c) => [{ ...c, chunked: false }, { ...c, chunked: true }]))(
      'should let it read the answer to $name (chunked: $chunked)',
      async ({ method, path, type, head, tail, fill, tar, code, status, chunked }) => {
        const result = await pythonRequest(platform.url, { method, path, type, key, size: SIZE, head, tail, fill, tar, chunked });
        expect({ status: result.status, code: result.body?.error?.code, error: result.error }).toEqual({ status, code, error: undefined });
      },
    );

    it('should keep serving after refusing bodies', async () => {
      expect((await api.get('/v1/sessions')).status).toBe(200);
    });
  });
});
