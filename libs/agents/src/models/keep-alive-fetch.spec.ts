import http from 'node:http';
import type { AddressInfo } from 'node:net';
import { ChunkedBody, keepAliveFetch, sendsChunkedBodies } from './keep-alive-fetch.js';

// A server that records each request's socket and body, and answers by path.
function startServer() {
  const sockets = new Set<unknown>();
  const bodies: string[] = [];
  const headers: http.IncomingHttpHeaders[] = [];
  const server = http.createServer((req, res) => {
    sockets.add(req.socket);
    headers.push(req.headers);
    const chunks: Buffer[] = [];
    req.on('data', (c: Buffer) => chunks.push(c));
    req.on('end', () => {
      bodies.push(Buffer.concat(chunks).toString());
      if (req.url === '/empty') return void res.writeHead(204).end();
      if (req.url === '/slow') return void setTimeout(() => res.end('late'), 5_000).unref();
      if (req.url === '/events') {
        res.writeHead(200, { 'content-type': 'text/event-stream' });
        res.write('data: 1\n\n');
        setTimeout(() => res.end('data: 2\n\n'), 10);
        return;
      }
      res.writeHead(429, { 'content-type': 'application/json', 'x-echo': String(req.headers['authorization']) });
      res.end(JSON.stringify({ error: { message: 'slow down' } }));
    });
  });
  return new Promise<{ url: string; sockets: Set<unknown>; bodies: string[]; headers: http.IncomingHttpHeaders[]; close: () => Promise<void> }>((resolve) =>
    server.listen(0, '127.0.0.1', () =>
      resolve({
        url: `http://127.0.0.1:${(server.address() as AddressInfo).port}`,
        sockets,
        bodies,
        headers,
        close: () => new Promise((done) => { server.closeAllConnections(); server.close(() => done()); }),
      }),
    ),
  );
}

describe('keepAliveFetch', () => {
  let server: Awaited<ReturnType<typeof startServer>>;
  const sut = keepAliveFetch();
  beforeAll(async () => (server = await startServer()));
  afterAll(() => server.close());

  it('sends the body and headers, answers status, headers and JSON, and reuses its connection', async () => {
    const first = await sut(`${server.url}/v1/chat`, {
      method: 'POST',
      headers: new Headers({ Authorization: 'Bearer k', 'content-type': 'application/json' }),
      body: Buffer.from('{"a":1}'),
    });
    expect(first.status).toBe(429);
    expect(first.ok).toBe(false);
    expect(first.headers.get('x-echo')).toBe('Bearer k');
    expect(await first.json()).toEqual({ error: { message: 'slow down' } });
    const second = await sut(`${server.url}/v1/chat`, { method: 'POST', headers: { authorization: 'Bearer k' }, body: 'two' });
    await second.text();
    expect(server.bodies.slice(-2)).toEqual(['{"a":1}', 'two']);
    expect(server.sockets.size).toBe(1);
  });

  it('sends a chunked body as its joined bytes under one Content-Length, and says it takes one', async () => {
    const chunks = [Buffer.from('{"messages":'), Buffer.from('[{"content":"h\u00e9"}'), Buffer.from(']}')];
    const answer = await sut(`${server.url}/v1/chat`, { method: 'POST', body: new ChunkedBody(chunks) as unknown as Uint8Array });
    await answer.text();
    expect(server.bodies.at(-1)).toBe(Buffer.concat(chunks).toString());
    expect(server.headers.at(-1)!['content-length']).toBe(String(Buffer.concat(chunks).length));
    expect(server.headers.at(-1)!['transfer-encoding']).toBeUndefined();
    expect(sendsChunkedBodies(sut)).toBe(true);
    expect(sendsChunkedBodies(fetch)).toBe(false);
  });

  it('reads a buffered answer once, as text, JSON, bytes or a stream, like fetch\'s own', async () => {
    const post = () => sut(`${server.url}/v1/chat`, { method: 'POST', body: '{}' });
    const asText = await post();
    expect(asText).toBeInstanceOf(Response);
    expect(asText.bodyUsed).toBe(false);
    expect(await asText.text()).toBe('{"error":{"message":"slow down"}}');
    expect(asText.bodyUsed).toBe(true);
    await expect(asText.json()).rejects.toMatchObject({ name: 'TypeError' });
    await expect(asText.arrayBuffer()).rejects.toMatchObject({ name: 'TypeError' });

    const twice = await post();
    const copy = twice.clone();
    expect(await twice.json()).toEqual({ error: { message: 'slow down' } });
    expect(JSON.parse(Buffer.from(await copy.arrayBuffer()).toString())).toEqual({ error: { message: 'slow down' } });
    expect(copy.headers.get('content-type')).toBe('application/json');

    const streamed = await post();
    const chunks: Buffer[] = [];
    for await (const chunk of streamed.body as unknown as AsyncIterable<Uint8Array>) chunks.push(Buffer.from(chunk));
    expect(Buffer.concat(chunks).toString()).toBe('{"error":{"message":"slow down"}}');
    expect(streamed.bodyUsed).toBe(true);
    await expect(streamed.text()).rejects.toMatchObject({ name: 'TypeError' });
  });

  it('answers a bodiless status with a null body', async () => {
    const response = await sut(`${server.url}/empty`, { method: 'POST', body: '' });
    expect(response.status).toBe(204);
    expect(response.body).toBeNull();
  });

  it('streams server-sent events as they come', async () => {
    const response = await sut(`${server.url}/events`, { method: 'POST', body: '{}' });
    const reader = response.body!.getReader();
    const decoder = new TextDecoder();
    expect(decoder.decode((await reader.read()).value)).toBe('data: 1\n\n');
    let rest = '';
    for (let part = await reader.read(); !part.done; part = await reader.read()) rest += decoder.decode(part.value);
    expect(rest).toBe('data: 2\n\n');
  });

  it('rejects with the signal\'s AbortError when aborted, as the model client\'s timeout does', async () => {
    const controller = new AbortController();
    const pending = sut(`${server.url}/slow`, { method: 'POST', body: '{}', signal: controller.signal });
    setTimeout(() => controller.abort(), 20);
    await expect(pending).rejects.toMatchObject({ name: 'AbortError' });
  });

  it('rejects a refused connection with fetch\'s TypeError and its cause', async () => {
    const closed = http.createServer();
    await new Promise<void>((resolve) => closed.listen(0, '127.0.0.1', resolve));
    const { port } = closed.address() as AddressInfo;
    await new Promise((resolve) => closed.close(resolve));
    await expect(sut(`http://127.0.0.1:${port}/v1`, { method: 'POST', body: '{}' })).rejects.toMatchObject({
      name: 'TypeError',
      message: 'fetch failed',
      cause: expect.objectContaining({ code: 'ECONNREFUSED' }),
    });
  });
});
