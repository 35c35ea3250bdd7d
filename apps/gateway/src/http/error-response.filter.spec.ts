import type { ArgumentsHost } from '@nestjs/common';
import { DrydockError } from '@drydock/core';
import { ErrorResponseFilter } from './error-response.filter.js';

// Node's response as far as the filter uses it, and Fastify's reply over it (a reply
// taken over by its handler is `sent`, and Fastify ignores send() on it).
function fakeReply(options: { hijacked?: boolean; headersSent?: boolean } = {}) {
  const raw = {
    statusCode: 200,
    headersSent: options.headersSent ?? false,
    headers: {} as Record<string, string | number>,
    body: null as string | null,
    ended: false,
    setHeader(name: string, value: string | number) {
      this.headers[name.toLowerCase()] = value;
    },
    end(chunk?: string) {
      this.body = chunk ?? null;
      this.ended = true;
    },
  };
  const reply = {
    raw,
    sent: options.hijacked ?? false,
    sentBody: null as unknown,
    status(code: number) {
      raw.statusCode = code;
      return reply;
    },
    header(name: string, value: string) {
      raw.setHeader(name, value);
      return reply;
    },
    send(body: unknown) {
      if (!reply.sent) reply.sentBody = body;
      return reply;
    },
  };
  return reply;
}

const hostOf = (reply: ReturnType<typeof fakeReply>) =>
  ({ switchToHttp: () => ({ getResponse: () => reply, getRequest: () => ({ method: 'POST', url: '/v1/mcp' }) }) }) as unknown as ArgumentsHost;

describe(ErrorResponseFilter.name, () => {
  const error = new DrydockError('NO_WORKER_AVAILABLE', 'No worker is available right now.', 503);

  it('should answer through Fastify a reply still its own, with Retry-After on a 503', () => {
    const reply = fakeReply();

    new ErrorResponseFilter().catch(error, hostOf(reply));

    expect(reply.raw.statusCode).toBe(503);
    expect(reply.sentBody).toEqual({ error: { code: 'NO_WORKER_AVAILABLE', message: 'No worker is available right now.' } });
    expect(reply.raw.headers['retry-after']).toBe('2');
  });

  it('should write the JSON error itself on a reply its handler took over before writing', () => {
    const reply = fakeReply({ hijacked: true });

    new ErrorResponseFilter().catch(error, hostOf(reply));

    expect(reply.raw.statusCode).toBe(503);
    expect(JSON.parse(reply.raw.body!)).toEqual({ error: { code: 'NO_WORKER_AVAILABLE', message: 'No worker is available right now.' } });
    expect(reply.raw.headers['content-type']).toBe('application/json; charset=utf-8');
    expect(reply.raw.headers['retry-after']).toBe('2');
  });

  it('should only end a response whose headers already went', () => {
    const reply = fakeReply({ hijacked: true, headersSent: true });

    new ErrorResponseFilter().catch(error, hostOf(reply));

    expect(reply.raw.ended).toBe(true);
    expect(reply.raw.body).toBeNull();
    expect(reply.raw.statusCode).toBe(200);
  });
});
