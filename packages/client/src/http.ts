import createClient, { type Client } from 'openapi-fetch';
import { DrydockError } from './errors.js';
import type { paths } from './generated/openapi.js';

export type Api = Client<paths>;

export interface RetryPolicy {
  // Attempts in all (1 turns retries off). Default 3.
  attempts: number;
  // Longest wait between two attempts, whatever Retry-After says. Default 10 s.
  maxDelayMs: number;
}

export const DEFAULT_RETRY: RetryPolicy = { attempts: 3, maxDelayMs: 10_000 };

const IDEMPOTENT = new Set(['GET', 'HEAD', 'PUT', 'DELETE', 'OPTIONS']);
// Answers that mean "not now": PostgreSQL or Redis restarting, no worker free, a rate limit.
const RETRYABLE_STATUS = new Set([429, 502, 503]);

const sleep = (ms: number) => new Promise((resolve) => setTimeout(resolve, ms));

// What openapi-fetch builds for each call (its `Request` option): the URL and the init
// as they are, instead of a WHATWG Request, whose construction and streamed body (sent
// chunked, without a Content-Length) cost ~0.2 ms a call against the gateway.
export class PlainRequest {
  constructor(
    readonly url: string,
    readonly init: RequestInit,
  ) {}

  get method(): string {
    return this.init.method ?? 'GET';
  }

  get signal(): AbortSignal | null | undefined {
    return this.init.signal;
  }
}

// A fetch that retries what is safe to retry: idempotent methods, and a POST the caller
// marked safe (`safe`, e.g. an execution with an idempotency key), on a network error or
// a 429/502/503, waiting Retry-After (bounded) or a short backoff. Everything else is
// sent exactly once. The body is in memory (a string or bytes), so every attempt
// resends the same init.
export function retryingFetch(base: typeof fetch, policy: RetryPolicy, safe = false) {
  return async (request: PlainRequest): Promise<Response> => {
    const retryable = safe || IDEMPOTENT.has(request.method);
    const attempts = retryable ? Math.max(1, policy.attempts) : 1;
    for (let attempt = 1; ; attempt++) {
      const last = attempt >= attempts;
      let response: Response;
      try {
        response = await base(request.url, request.init);
      } catch (error) {
        // The caller gave up (AbortSignal): not an outage, nothing to retry.
        if (request.signal?.aborted || (error as Error).name === 'AbortError') throw error;
        if (last) throw new DrydockError('NETWORK_ERROR', `Could not reach Drydock: ${(error as Error).message}`, 0);
        await sleep(Math.min(policy.maxDelayMs, 200 * 2 ** attempt));
        continue;
      }
      if (last || !RETRYABLE_STATUS.has(response.status)) return response;
      const retryAfter = Number(response.headers.get('retry-after'));
      await response.body?.cancel().catch(() => undefined);
      await sleep(Math.min(policy.maxDelayMs, Number.isFinite(retryAfter) && retryAfter > 0 ? retryAfter * 1000 : 200 * 2 ** attempt));
    }
  };
}

export interface Transport {
  api: Api;
  // Pass as a request's `fetch` to retry a POST too: only for requests that are safe to
  // repeat (an idempotency key).
  safeFetch: (request: Request) => Promise<Response>;
  // Pass as a request's `fetch` to send it once whatever its method: a streamed body is
  // read as it is sent, so there is nothing to send again.
  onceFetch: (request: Request) => Promise<Response>;
  baseUrl: string;
}

export function createTransport(options: { url: string; key: string; fetch?: typeof fetch; retry?: Partial<RetryPolicy> }): Transport {
  const baseUrl = options.url.replace(/\/+$/, '');
  const base = options.fetch ?? globalThis.fetch.bind(globalThis);
  const policy = { ...DEFAULT_RETRY, ...options.retry };
  // openapi-fetch calls `fetch` with whatever its `Request` option built: a PlainRequest.
  const asFetch = (f: (request: PlainRequest) => Promise<Response>) => f as unknown as (request: Request) => Promise<Response>;
  const api = createClient<paths>({
    baseUrl,
    headers: { authorization: `Bearer ${options.key}` },
    Request: PlainRequest as unknown as typeof Request,
    fetch: asFetch(retryingFetch(base, policy)),
  });
  return { api, safeFetch: asFetch(retryingFetch(base, policy, true)), onceFetch: asFetch(retryingFetch(base, { ...policy, attempts: 1 })), baseUrl };
}

// The data of a 2xx answer, or the platform's error thrown as a DrydockError
// (openapi-fetch has already parsed the error body into `error`).
export async function unwrap<T>(call: Promise<{ data?: T; error?: unknown; response: Response }>): Promise<T> {
  const { data, error, response } = await call;
  if (response.ok) return data as T;
  throw errorFromBody(error, response);
}

export function errorFromBody(body: unknown, response: Response): DrydockError {
  const requestId = response.headers.get('x-request-id') ?? undefined;
  const envelope = (body ?? {}) as { error?: { code?: unknown; message?: unknown; details?: Record<string, unknown> } };
  if (envelope.error && typeof envelope.error.code === 'string') {
    return new DrydockError(envelope.error.code, String(envelope.error.message ?? envelope.error.code), response.status, envelope.error.details, requestId);
  }
  return new DrydockError('HTTP_ERROR', `HTTP ${response.status}`, response.status, undefined, requestId);
}

// The bytes of a 2xx answer asked with `parseAs: 'arrayBuffer'`.
export async function unwrapBytes(call: Promise<{ data?: unknown; error?: unknown; response: Response }>): Promise<Uint8Array> {
  const { data, error, response } = await call;
  if (!response.ok) throw errorFromBody(error, response);
  return new Uint8Array((data as ArrayBuffer | undefined) ?? new ArrayBuffer(0));
}

// The body of a 2xx answer asked with `parseAs: 'stream'` (server-sent events, NDJSON).
export async function unwrapStream(call: Promise<{ error?: unknown; response: Response }>): Promise<ReadableStream<Uint8Array>> {
  const { error, response } = await call;
  if (!response.ok) throw errorFromBody(error, response);
  if (!response.body) throw new DrydockError('INVALID_RESPONSE', 'The streamed answer had no body.', response.status);
  return response.body;
}
