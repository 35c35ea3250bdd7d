import { OpenAIClient } from '@langchain/openai';
import { ChunkedBody, sendsChunkedBodies } from './keep-alive-fetch.js';

// A chat completions request that does not stream, sent without the OpenAI client's
// request machinery, and answered as the client answers it.
//
// Per call the client builds its headers and URL again, makes its log lines (even when
// nothing logs), wraps the answer in its promise and parse steps: about 0.2 ms of CPU per
// call on top of the HTTP exchange (bench/README.md, agent; a turn makes two calls).
// Here the URL and headers are the ones the client itself builds, asked of it once (and
// again after a failure to), and each call is one fetch.
//
// What the client would do with maxRetries 0 (LangChain gives it 0 and retries itself,
// around this), and this does too:
// - a signal already aborted, or aborted during the request: APIUserAbortError;
// - no answer within the timeout: APIConnectionTimeoutError; any other failure to
//   connect or send: APIConnectionError, with the failure as its cause;
// - a status other than 2xx: APIError.generate(status, the body's JSON or none, the body's
//   text when it is not JSON, headers), so the same subclass (BadRequestError,
//   RateLimitError...) with the same message;
// - a 2xx answer: its JSON (its text when it is not JSON), with the request id of the
//   `x-request-id` header as the client's hidden `_request_id`.
export class DirectChatCompletions {
  private target: Promise<{ url: string; headers: Record<string, string>; timeoutMs: number }> | undefined;

  constructor(
    // The client LangChain made for the model and the options it hands it per request
    // (they give the URL, key and headers).
    private readonly client: () => { client: OpenAIClient; options: object },
    private readonly fetch: typeof globalThis.fetch,
  ) {}

  // body: the request's JSON, whole or as chunks (sent as they are by a fetch that takes
  // them, joined for any other).
  async create(body: Uint8Array | readonly Uint8Array[], signal?: AbortSignal | null): Promise<unknown> {
    const { url, headers, timeoutMs } = await (this.target ??= this.resolveTarget().catch((error: unknown) => {
      this.target = undefined;
      throw error;
    }));
    if (signal?.aborted) throw new OpenAIClient.APIUserAbortError();
    const controller = new AbortController();
    const abort = () => controller.abort();
    signal?.addEventListener('abort', abort, { once: true });
    const timer = setTimeout(abort, timeoutMs);
    let response: Response;
    try {
      response = await this.fetch(url, { method: 'POST', headers, body: this.sendable(body), signal: controller.signal });
    } catch (error) {
      if (signal?.aborted) throw new OpenAIClient.APIUserAbortError();
      if (isAbortError(error) || /timed? ?out/i.test(String(error) + (hasCause(error) ? String(error.cause) : ''))) {
        throw new OpenAIClient.APIConnectionTimeoutError();
      }
      throw new OpenAIClient.APIConnectionError({ cause: error instanceof Error ? error : new Error(String(error)) });
    } finally {
      clearTimeout(timer);
      signal?.removeEventListener('abort', abort);
    }
    if (!response.ok) {
      const text = await response.text().catch((error: unknown) => (error instanceof Error ? error.message : String(error)));
      const json = parseOrUndefined(text);
      throw OpenAIClient.APIError.generate(response.status, json as object | undefined, json === undefined ? text : undefined, response.headers);
    }
    return parseAnswer(response);
  }

  private sendable(body: Uint8Array | readonly Uint8Array[]): FetchBody {
    if (!isChunks(body)) return body;
    return sendsChunkedBodies(this.fetch) ? (new ChunkedBody(body) as unknown as FetchBody) : Buffer.concat(body);
  }

  private async resolveTarget(): Promise<{ url: string; headers: Record<string, string>; timeoutMs: number }> {
    const { client, options } = this.client();
    const { req, url, timeout } = await client.buildRequest({ ...options, method: 'post', path: '/chat/completions', body: {} });
    const headers: Record<string, string> = {};
    new Headers(req.headers as ConstructorParameters<typeof Headers>[0]).forEach((value, name) => (headers[name] = value));
    return { url, headers, timeoutMs: timeout };
  }
}

async function parseAnswer(response: Response): Promise<unknown> {
  if (response.status === 204) return null;
  const mediaType = response.headers.get('content-type')?.split(';')[0]?.trim();
  if (!(mediaType?.includes('application/json') || mediaType?.endsWith('+json'))) return response.text();
  if (response.headers.get('content-length') === '0') return undefined;
  const json: unknown = await response.json();
  if (json && typeof json === 'object' && !Array.isArray(json)) {
    Object.defineProperty(json, '_request_id', { value: response.headers.get('x-request-id'), enumerable: false });
  }
  return json;
}

function parseOrUndefined(text: string): unknown {
  try {
    return JSON.parse(text);
  } catch {
    return undefined;
  }
}

type FetchBody = NonNullable<Parameters<typeof fetch>[1]>['body'];

function isChunks(body: Uint8Array | readonly Uint8Array[]): body is readonly Uint8Array[] {
  return Array.isArray(body);
}

function isAbortError(error: unknown): boolean {
  return typeof error === 'object' && error !== null && 'name' in error && error.name === 'AbortError';
}

function hasCause(error: unknown): error is { cause: unknown } {
  return typeof error === 'object' && error !== null && 'cause' in error;
}
