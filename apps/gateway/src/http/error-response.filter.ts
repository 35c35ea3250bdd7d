import { type ArgumentsHost, Catch, type ExceptionFilter, HttpException, Logger } from '@nestjs/common';
import type { FastifyReply } from 'fastify';
import { DrydockError, MAX_JSON_DEPTH, outageOf, ServiceUnavailableError } from '@drydock/core';

export interface ErrorBody {
  error: { code: string; message: string; details?: Record<string, unknown> };
}

const STATUS_CODES: Record<number, string> = {
  400: 'BAD_REQUEST',
  401: 'UNAUTHORIZED',
  403: 'FORBIDDEN',
  404: 'NOT_FOUND',
  405: 'METHOD_NOT_ALLOWED',
  409: 'CONFLICT',
  413: 'BODY_TOO_LARGE',
  414: 'URL_TOO_LONG',
  415: 'UNSUPPORTED_MEDIA_TYPE',
  422: 'UNPROCESSABLE',
  429: 'TOO_MANY_REQUESTS',
  503: 'SERVICE_UNAVAILABLE',
};

// The one place errors become HTTP: every response body is
// {"error": {"code", "message", "details"?}}. Unknown errors are 500s and logged.
@Catch()
export class ErrorResponseFilter implements ExceptionFilter {
  private readonly logger = new Logger('HTTP');

  catch(exception: unknown, host: ArgumentsHost): void {
    const reply = host.switchToHttp().getResponse<FastifyReply>();
    const { status, body } = this.toResponse(exception);
    if (status >= 500 && !(exception instanceof DrydockError)) {
      const outage = outageOf(exception);
      if (outage) this.logger.warn(`${outage} unavailable: ${(exception as Error).message}`);
      else this.logger.error(exception instanceof Error ? exception.stack : String(exception));
    }
    // A response already under way (a stream that failed part-way) can only be ended.
    if (reply.raw.headersSent) {
      reply.raw.end();
      return;
    }
    const retryAfter = status === 503 || status === 429 ? String(body.error.details?.retryAfterSeconds ?? 2) : null;
    if (reply.sent) {
      // Taken over by its handler (reply.hijack) before it wrote anything: Fastify sends
      // nothing more, so the error is written on Node's response.
      const json = JSON.stringify(body);
      reply.raw.statusCode = status;
      reply.raw.setHeader('Content-Type', 'application/json; charset=utf-8');
      reply.raw.setHeader('Content-Length', Buffer.byteLength(json));
      if (retryAfter) reply.raw.setHeader('Retry-After', retryAfter);
      reply.raw.end(json);
      return;
    }
    if (retryAfter) reply.header('Retry-After', retryAfter);
    void reply.status(status).send(body);
  }

  toResponse(exception: unknown): { status: number; body: ErrorBody } {
    // PostgreSQL or Redis down or restarting: the caller may retry, it is not our bug.
    const outage = exception instanceof DrydockError ? null : outageOf(exception);
    if (outage) exception = new ServiceUnavailableError(outage);
    if (exception instanceof DrydockError) {
      const body: ErrorBody = { error: { code: exception.code, message: exception.message } };
      if (exception.details) body.error.details = exception.details;
      return { status: exception.status, body };
    }
    // Body errors (body-parsing.ts, raw-body) carry a `type` and a status; the router's
    // (a malformed URL) a status code. Nest's adapter wraps them in an HttpException
    // whose cause is the original.
    const cause = exception instanceof HttpException ? exception.cause : undefined;
    const parser = ((cause as object | undefined) ?? exception) as { type?: string; status?: number; statusCode?: number; limit?: number };
    const readStatus = parser?.status ?? parser?.statusCode;
    // The router's refusals: a path parameter over its length, a malformed percent-encoding.
    if (readStatus === 414) return error(414, 'URL_TOO_LONG', 'A path segment of the request URL is too long.');
    if ((cause ?? exception) instanceof URIError) {
      return error(400, 'INVALID_URL', 'The request URL has an invalid percent-encoding.');
    }
    if (parser?.type === 'file.too.large') {
      return error(413, 'FILE_TOO_LARGE', `The file is larger than the ${parser.limit} bytes a thread file may hold.`);
    }
    if (parser?.type === 'entity.too.large') {
      return error(413, 'BODY_TOO_LARGE', `The request body is larger than the ${parser.limit} bytes allowed.`);
    }
    if (parser?.type === 'entity.too.deep') {
      return error(400, 'JSON_TOO_DEEP', `The request body nests JSON objects and arrays more than ${MAX_JSON_DEPTH} levels deep.`, {
        maxDepth: MAX_JSON_DEPTH,
      });
    }
    if (parser?.type === 'entity.parse.failed') {
      return error(400, 'INVALID_JSON', 'The request body is not valid JSON.');
    }
    if (parser?.type === 'charset.unsupported' || parser?.type === 'encoding.unsupported') {
      return error(415, 'UNSUPPORTED_MEDIA_TYPE', 'The request body encoding is not supported.');
    }
    if (exception instanceof HttpException) {
      const status = exception.getStatus();
      const response = exception.getResponse() as { message?: string | string[] } | string;
      if (status === 400 && typeof response === 'object' && Array.isArray(response.message)) {
        return error(400, 'VALIDATION_FAILED', `The request is invalid: ${response.message.join('; ')}.`, {
          problems: response.message,
        });
      }
      if (status === 404) return error(404, 'ROUTE_NOT_FOUND', 'No such route.');
      const message = typeof response === 'string' ? response : (response.message ?? exception.message);
      return error(status, STATUS_CODES[status] ?? (status >= 500 ? 'INTERNAL_ERROR' : 'BAD_REQUEST'), String(message));
    }
    if (typeof readStatus === 'number' && readStatus >= 400 && readStatus < 500) {
      return error(readStatus, STATUS_CODES[readStatus] ?? 'BAD_REQUEST', 'The request could not be read.');
    }
    return error(500, 'INTERNAL_ERROR', 'Something went wrong on our side; it has been logged.');
  }
}

function error(status: number, code: string, message: string, details?: Record<string, unknown>) {
  const body: ErrorBody = { error: { code, message } };
  if (details) body.error.details = details;
  return { status, body };
}
