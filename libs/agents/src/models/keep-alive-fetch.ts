import http from 'node:http';
import https from 'node:https';
import { Readable } from 'node:stream';
import { chunksLength, endWithChunks } from '@drydock/core';

// Status codes whose response has no body (a Response made with one throws).
const NULL_BODY = new Set([101, 103, 204, 205, 304]);

// The `fetch` the model client is given: one request on node:http(s) keep-alive agents,
// its answer as a WHATWG Response. Node 20's global fetch (undici) costs about twice
// the CPU per request (WHATWG request and body streams, the llhttp parser in wasm):
// 0.66-0.77 against 0.37-0.42 ms for a chat completions call, measured with
// bench/agent's scripted model (see bench/README.md, agent). A turn makes two.
//
// What the OpenAI client needs of fetch, and what this does:
// - a body given as bytes or a string (its JSON request), sent as is;
// - an AbortSignal for its timeout: aborting rejects with the signal's reason (an
//   AbortError) and ends the request;
// - a server-sent-events answer as a stream, any other answer buffered whole;
// - a network failure rejects with a TypeError carrying the cause, as fetch does.
// It does not follow redirects (a chat completions endpoint does not send them; the 3xx
// is answered to the client, which reports it), and takes no proxy from the environment
// (neither does Node 20's fetch).
export function keepAliveFetch(): typeof fetch {
  const agents = {
    'http:': new http.Agent({ keepAlive: true }),
    'https:': new https.Agent({ keepAlive: true }),
  };
  const send: typeof fetch = (input, init = {}) =>
    new Promise<Response>((resolve, reject) => {
      const url = new URL(typeof input === 'string' || input instanceof URL ? input : input.url);
      const agent = agents[url.protocol as keyof typeof agents];
      if (!agent) return reject(new TypeError(`fetch failed: unsupported protocol ${url.protocol}`));
      const { signal } = init;
      if (signal?.aborted) return reject(signal.reason);
      const body = requestBody(init.body);
      const request = (url.protocol === 'https:' ? https : http).request(
        url,
        { method: init.method ?? 'GET', headers: plainHeaders(init.headers), agent },
        (response) => {
          const status = response.statusCode ?? 0;
          // As pairs: the Response makes its Headers from them once.
          const headers: [string, string][] = [];
          const raw = response.rawHeaders;
          for (let i = 0; i < raw.length; i += 2) headers.push([raw[i]!, raw[i + 1]!]);
          const answer = { status, statusText: response.statusMessage ?? '', headers };
          if (String(response.headers['content-type']).startsWith('text/event-stream')) {
            // The abort listener stays: aborting destroys the request, which errors the stream.
            resolve(new Response(Readable.toWeb(response) as ReadableStream<Uint8Array>, answer));
            return;
          }
          const chunks: Buffer[] = [];
          response.on('data', (chunk: Buffer) => chunks.push(chunk));
          response.on('error', fail);
          response.on('end', () => {
            signal?.removeEventListener('abort', onAbort);
            resolve(NULL_BODY.has(status) ? new Response(null, answer) : (new BufferedResponse(Buffer.concat(chunks), answer) as unknown as Response));
          });
        },
      );
      function fail(error: Error): void {
        signal?.removeEventListener('abort', onAbort);
        reject(signal?.aborted ? signal.reason : new TypeError('fetch failed', { cause: error }));
      }
      function onAbort(): void {
        request.destroy(signal!.reason);
      }
      signal?.addEventListener('abort', onAbort, { once: true });
      request.on('error', fail);
      if (!Array.isArray(body)) return void request.end(body);
      request.setHeader('content-length', chunksLength(body));
      endWithChunks(request, body);
    });
  return Object.assign(send, { [SENDS_CHUNKED_BODIES]: true });
}

// A request body as chunks sent one after the other, for a fetch that says it takes one
// (SENDS_CHUNKED_BODIES, as keepAliveFetch's does): a model request's conversation is the
// message cache's own bytes (JsonListBytes), sent without copying them into one buffer.
export class ChunkedBody {
  constructor(readonly chunks: readonly Uint8Array[]) {}
}

export const SENDS_CHUNKED_BODIES = Symbol('drydock.sendsChunkedBodies');

export function sendsChunkedBodies(fetcher: typeof fetch): boolean {
  return (fetcher as { [SENDS_CHUNKED_BODIES]?: boolean })[SENDS_CHUNKED_BODIES] === true;
}

// The lib typings declare Response's members as properties, which a class cannot
// override with methods; at run time they are the prototype's methods and accessors.
const ResponseClass = Response as unknown as new (body: null, init: ResponseInit) => object;

// A Response whose body is already in memory: text() and json() decode the bytes
// directly. A WHATWG Response made from bytes wraps them in a ReadableStream that
// text() then reads back chunk by chunk: for a chat completions answer, 0.05-0.1 ms of
// the 0.6-0.7 ms of client CPU per call (bench/README.md, agent). Anything else (body,
// arrayBuffer, blob, formData, clone) gets a Response made from the same bytes the first
// time it is asked for, so it behaves as fetch's own would; a body is read once either way.
class BufferedResponse extends ResponseClass {
  readonly #bytes: Buffer;
  readonly #init: ResponseInit;
  #full: Response | undefined;
  #read = false;

  constructor(bytes: Buffer, init: ResponseInit) {
    super(null, init);
    this.#bytes = bytes;
    this.#init = init;
  }

  get body(): ReadableStream<Uint8Array> | null {
    return this.#response().body as ReadableStream<Uint8Array> | null;
  }

  get bodyUsed(): boolean {
    return this.#read || (this.#full?.bodyUsed ?? false);
  }

  async text(): Promise<string> {
    if (this.#full) return this.#full.text();
    this.#unread();
    this.#read = true;
    return this.#bytes.toString('utf8');
  }

  async json(): Promise<any> {
    return JSON.parse(await this.text());
  }

  async arrayBuffer(): Promise<ArrayBuffer> {
    return this.#unread().#response().arrayBuffer();
  }

  async blob(): Promise<Blob> {
    return this.#unread().#response().blob();
  }

  async formData(): Promise<FormData> {
    return this.#unread().#response().formData();
  }

  clone(): Response {
    if (this.bodyUsed) throw new TypeError('Response.clone: Body has already been consumed.');
    return this.#full ? this.#full.clone() : (new BufferedResponse(this.#bytes, this.#init) as unknown as Response);
  }

  #unread(): this {
    if (this.#read) throw new TypeError('Body is unusable: Body has already been read');
    return this;
  }

  // The stock Response over the bytes (none once read as text), for the ways of
  // reading not done above.
  #response(): Response {
    this.#full ??= new Response(this.#read ? null : this.#bytes, this.#init);
    return this.#full;
  }
}

type FetchInit = NonNullable<Parameters<typeof fetch>[1]>;

function plainHeaders(headers: FetchInit['headers']): Record<string, string> {
  const out: Record<string, string> = {};
  if (!headers) return out;
  if (headers instanceof Headers) headers.forEach((value, name) => (out[name] = value));
  else if (Array.isArray(headers)) for (const [name, value] of headers) out[name!.toLowerCase()] = value!;
  else for (const [name, value] of Object.entries(headers as Record<string, string>)) out[name.toLowerCase()] = value;
  return out;
}

function requestBody(body: FetchInit['body']): string | Uint8Array | readonly Uint8Array[] | undefined {
  if (body === null || body === undefined) return undefined;
  if (typeof body === 'string' || body instanceof Uint8Array) return body;
  if ((body as unknown) instanceof ChunkedBody) return (body as unknown as ChunkedBody).chunks;
  if (body instanceof ArrayBuffer) return new Uint8Array(body);
  // Streams, forms and blobs: the model client sends none of these.
  throw new TypeError('keepAliveFetch sends only string or byte bodies');
}
