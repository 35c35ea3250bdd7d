import type { IncomingMessage } from 'node:http';
import type { FastifyInstance, FastifyRequest } from 'fastify';
import getRawBody from 'raw-body';
import secureJson from 'secure-json-parse';
import { MAX_JSON_DEPTH, nestsDeeperThan, type AppConfig } from '@drydock/core';

const FILE_CONTENT_ROUTE = /^\/v1\/threads\/[^/]+\/files\/content(\?|$)/;
const BATCH_SUBMIT_ROUTE = /^\/v1\/batches\/?(\?|$)/;
const PROCESS_STDIN_ROUTE = /^\/v1\/sessions\/[^/]+\/processes\/[^/]+\/stdin(\?|$)/;
// What one write to a background process's stdin may carry.
export const MAX_STDIN_BYTES = 1024 * 1024;
const JSON_TYPE = /\bjson\b/i;

// An error shaped like body-parser's (an http-errors error with a `type`), which is what
// ErrorResponseFilter turns into INVALID_JSON, BODY_TOO_LARGE, FILE_TOO_LARGE or a 415.
function readError(status: number, type: string, message: string, extra: Record<string, unknown> = {}): Error {
  return Object.assign(new Error(message), { status, statusCode: status, expose: true, type, ...extra });
}

// What a request's body becomes, decided by its route and Content-Type (one parser for
// every type, replacing Fastify's own):
// - a file upload (PUT /v1/threads/:id/files/content): its bytes, whatever the type, up
//   to the thread file limit;
// - bytes for a background process's stdin (POST /v1/sessions/:id/processes/:pid/stdin):
//   its bytes, whatever the type, up to MAX_STDIN_BYTES;
// - JSON (`application/json`, `…+json`): parsed, up to the request body limit (a batch
//   submitted as JSON: the batch body limit). An empty body is `{}`; a body that is not
//   an object or an array is refused, as body-parser's strict mode did, and so is one
//   with a `__proto__` key (secure-json-parse, as Fastify's own parser), and one nested
//   deeper than MAX_JSON_DEPTH (JSON_TOO_DEEP: found before parsing, so no recursive walk
//   of the value, class-transformer's or JSON.stringify's, can run out of stack);
// - anything else (a tar archive, an NDJSON batch, the MCP route's own types): not read
//   here; the controller reads `request.raw` as it streams.
export function registerBodyParsers(instance: FastifyInstance, config: AppConfig): void {
  instance.removeAllContentTypeParsers();
  instance.addContentTypeParser('*', (request: FastifyRequest, payload: IncomingMessage, done: (error: Error | null, body?: unknown) => void) => {
    const url = request.url;
    const type = request.headers['content-type'] ?? '';
    if (request.method === 'PUT' && FILE_CONTENT_ROUTE.test(url)) {
      // Over the limit it is the file that is too large (FILE_TOO_LARGE), not the body.
      readBody(payload, config.vfs.maxFileBytes).then(
        (bytes) => done(null, bytes),
        (error: Error & { type?: string }) => done(error.type === 'entity.too.large' ? Object.assign(error, { type: 'file.too.large' }) : error),
      );
      return;
    }
    if (request.method === 'POST' && PROCESS_STDIN_ROUTE.test(url)) {
      readBody(payload, MAX_STDIN_BYTES).then((bytes) => done(null, bytes), done);
      return;
    }
    if (!JSON_TYPE.test(type)) {
      done(null, undefined);
      return;
    }
    const charset = /;\s*charset\s*=\s*"?([^";\s]+)/i.exec(type)?.[1]?.toLowerCase();
    if (charset !== undefined && !charset.startsWith('utf-8') && charset !== 'utf8') {
      payload.resume();
      done(readError(415, 'charset.unsupported', `unsupported charset "${charset.toUpperCase()}"`, { charset }));
      return;
    }
    const limit = request.method === 'POST' && BATCH_SUBMIT_ROUTE.test(url) ? config.batches.maxBodyBytes : config.gateway.maxBodyBytes;
    readBody(payload, limit).then((bytes) => {
      if (nestsDeeperThan(bytes, MAX_JSON_DEPTH)) {
        return done(readError(400, 'entity.too.deep', `the body nests JSON deeper than ${MAX_JSON_DEPTH} levels`, { maxDepth: MAX_JSON_DEPTH }));
      }
      const text = bytes.toString('utf8');
      const first = /\S/.exec(text)?.[0];
      if (first === undefined) return done(null, {});
      if (first !== '{' && first !== '[') return done(readError(400, 'entity.parse.failed', 'the body is not a JSON object or array'));
      try {
        // Fastify's own JSON rule: a `__proto__` key, or `constructor.prototype`, refuses
        // the body, so no later merge of it can reach an object's prototype.
        done(null, secureJson.parse(text, undefined, { protoAction: 'error', constructorAction: 'error' }));
      } catch (error) {
        done(readError(400, 'entity.parse.failed', (error as Error).message));
      }
    }, done);
  });
}

// The whole body, refused past `limit` (its Content-Length checked first) with
// raw-body's `entity.too.large`. Compressed bodies are refused: nothing here inflates.
function readBody(payload: IncomingMessage, limit: number): Promise<Buffer> {
  const encoding = (payload.headers['content-encoding'] ?? 'identity').toLowerCase();
  if (encoding !== 'identity') {
    payload.resume();
    return Promise.reject(readError(415, 'encoding.unsupported', `unsupported content encoding "${encoding}"`, { encoding }));
  }
  return getRawBody(payload, { limit, length: payload.headers['content-length'] });
}
