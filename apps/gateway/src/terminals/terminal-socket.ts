import websocket from '@fastify/websocket';
import { Logger } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { RawData, WebSocket } from 'ws';
import { addToLogContext, DrydockError, TenantsService } from '@drydock/core';
import { SessionTerminalsService, terminalSizeOf, type OpenedTerminal } from '@drydock/sessions';
import { AuthError } from '../auth/auth.errors.js';
import { bearerToken } from '../auth/bearer-token.js';
import { TenantAuthGuard } from '../auth/tenant-auth.guard.js';
import { ErrorResponseFilter } from '../http/error-response.filter.js';
import { TENANT_KEY_SCHEME } from '../openapi/api-auth.js';
import { declareErrors, TENANT_AUTH_ERRORS } from '../openapi/api-errors.js';

export const TERMINAL_ROUTE = '/v1/sessions/:id/pty';
// Typed input comes in keystrokes and pastes; a frame over this closes the socket (1009).
const MAX_FRAME_BYTES = 1 << 20;
// A client that does not read what the terminal shows: past this much waiting in its
// socket, output is dropped (and it is told once) until it catches up, so a `yes` in
// the shell cannot fill the gateway's memory.
const SLOW_CLIENT_BYTES = 8 << 20;
const DROPPED_NOTE = Buffer.from('\r\n[drydock: output dropped: the client is not reading fast enough]\r\n');

class TerminalSocketError extends DrydockError {
  static upgradeRequired() {
    return new TerminalSocketError('UPGRADE_REQUIRED', 'GET /v1/sessions/:id/pty is a WebSocket: connect with a WebSocket client (Upgrade: websocket).', 426);
  }
  static invalidMessage(why: string) {
    return new TerminalSocketError('INVALID_TERMINAL_MESSAGE', `${why}: text frames are JSON, {"type": "resize", "cols": N, "rows": N}; typed bytes go in binary frames.`, 400);
  }
}

// The terminal WebSocket (API.md "Commands, processes and terminals"), on Fastify
// itself through @fastify/websocket: Nest's controllers cannot take an upgrade. Before
// the upgrade everything is HTTP (authentication by the tenant key or a one-use token,
// the session, opening the shell on its worker), so a refusal is an ordinary error
// answer; after it, binary frames are the terminal's bytes both ways and text frames
// JSON: `resize` from the client, `exit` from the server before it closes.
export async function mountTerminalSocket(app: NestFastifyApplication): Promise<void> {
  await app.register(websocket, { options: { maxPayload: MAX_FRAME_BYTES } });
  const fastify = app.getHttpAdapter().getInstance();
  const tenants = app.get(TenantsService);
  const auth = app.get(TenantAuthGuard);
  const terminals = app.get(SessionTerminalsService);
  const logger = new Logger('TerminalSocket');
  const errors = new ErrorResponseFilter();
  const opened = new WeakMap<FastifyRequest, OpenedTerminal>();

  const refuse = (reply: FastifyReply, error: unknown) => {
    const { status, body } = errors.toResponse(error);
    if (status >= 500 && !(error instanceof DrydockError)) logger.error(error instanceof Error ? error.stack : String(error));
    return reply.status(status).send(body);
  };

  // The key, as on every /v1 route (TenantAuthGuard), or a one-use token.
  const tenantOf = async (request: FastifyRequest, sessionId: string): Promise<string> => {
    const query = request.query as Record<string, unknown>;
    if (!bearerToken(request) && typeof query.token === 'string') {
      const tenantId = await terminals.redeemToken(query.token, sessionId);
      if ((await tenants.get(tenantId)).suspendedAt) throw AuthError.suspended();
      addToLogContext({ tenantId });
      return tenantId;
    }
    return (await auth.authenticate(request, { countRequest: true })).tenantId;
  };

  // In a plugin of its own, so that it is added when the application starts, with the
  // routes Nest registers (and seen by onRoute hooks added after this).
  fastify.register(async (scope) => {
    scope.route({
      method: 'GET',
      url: TERMINAL_ROUTE,
      preValidation: async (request, reply) => {
        try {
          if (!request.ws) {
            // Told to upgrade, once it is known who asks (a token is not spent on it).
            if (!bearerToken(request) && typeof (request.query as Record<string, unknown>).token === 'string') return;
            await tenantOf(request, (request.params as { id: string }).id);
            return;
          }
          const sessionId = (request.params as { id: string }).id;
          const query = request.query as Record<string, unknown>;
          const size = terminalSizeOf(query.cols, query.rows);
          const tenantId = await tenantOf(request, sessionId);
          const terminal = await terminals.open(tenantId, sessionId, size);
          opened.set(request, terminal);
          // Hung up if the client goes before (or after) the upgrade.
          request.raw.socket.once('close', () => terminal.close());
        } catch (error) {
          return refuse(reply, error);
        }
      },
      handler: (_request, reply) => refuse(reply.header('Upgrade', 'websocket'), TerminalSocketError.upgradeRequired()),
      wsHandler: (socket: WebSocket, request: FastifyRequest) => {
        const terminal = opened.get(request);
        if (!terminal) {
          socket.close(1011, 'no terminal');
          return;
        }
        relay(socket, terminal);
      },
    });
  });
}

function relay(socket: WebSocket, terminal: OpenedTerminal): void {
  let dropping = false;
  terminal.attach({
    output: (data) => {
      if (socket.readyState !== socket.OPEN) return;
      if (socket.bufferedAmount > SLOW_CLIENT_BYTES) {
        if (!dropping) socket.send(DROPPED_NOTE);
        dropping = true;
        return;
      }
      dropping = false;
      socket.send(data);
    },
    exit: ({ exitCode, signal, reason }) => {
      if (socket.readyState !== socket.OPEN) return;
      socket.send(JSON.stringify({ type: 'exit', exitCode, signal, ...(reason ? { reason } : {}) }));
      socket.close(1000, 'exited');
    },
  });
  socket.on('message', (data: RawData, isBinary: boolean) => {
    const bytes = Buffer.isBuffer(data) ? data : Array.isArray(data) ? Buffer.concat(data) : Buffer.from(data);
    if (isBinary) {
      terminal.input(bytes);
      return;
    }
    try {
      let message: { type?: unknown; cols?: unknown; rows?: unknown };
      try {
        message = JSON.parse(bytes.toString('utf8')) as typeof message;
      } catch {
        throw TerminalSocketError.invalidMessage('A text frame that is not JSON');
      }
      if (message?.type !== 'resize') throw TerminalSocketError.invalidMessage(`An unknown message type ${JSON.stringify(message?.type)}`);
      terminal.resize(terminalSizeOf(message.cols, message.rows));
    } catch (error) {
      const { code, message } = error as DrydockError;
      socket.send(JSON.stringify({ type: 'error', code, message }));
    }
  });
  socket.on('close', () => terminal.close());
  socket.on('error', () => terminal.close());
}

// The route's entry in the OpenAPI document (it is not a Nest controller's): the
// handshake and its parameters; the errors it answers before the upgrade are declared
// as a controller's are, and filled in with the others.
export const TERMINAL_SOCKET_OPERATION = {
  tags: ['terminals'],
  operationId: 'TerminalSocket_open',
  summary: 'An interactive shell on a pseudo-terminal, over a WebSocket',
  description:
    'Upgrade to a WebSocket. Authenticated by the tenant key (`Authorization: Bearer`) or by `?token=` from POST /v1/sessions/:id/pty-tokens (browsers). ' +
    "The shell is `bash -l` as the sandbox user in /session, TERM=xterm-256color, opened once the thread's files are in the sandbox. " +
    "Binary frames are the terminal's bytes both ways; text frames are JSON: the client sends `{\"type\": \"resize\", \"cols\", \"rows\"}`, " +
    'the server `{"type": "exit", "exitCode", "signal", "reason"?}` before it closes (1000), and `{"type": "error", "code", "message"}` for a text frame it cannot take. ' +
    'Closing the socket hangs the terminal up (SIGHUP to its shell, SIGKILL 3 s later). At most 4 terminals per session. ' +
    'A request that is not a WebSocket upgrade answers 426 once authenticated.',
  parameters: [
    { name: 'id', in: 'path', required: true, schema: { type: 'string' } },
    { name: 'cols', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 1000, default: 80 } },
    { name: 'rows', in: 'query', required: false, schema: { type: 'integer', minimum: 1, maximum: 1000, default: 24 } },
    { name: 'token', in: 'query', required: false, schema: { type: 'string' }, description: 'A one-use token, instead of the Authorization header.' },
  ],
  responses: { '101': { description: 'Switching Protocols: the terminal is open.' } },
  security: [{ [TENANT_KEY_SCHEME]: [] }],
};

declareErrors('TerminalSocket', TENANT_AUTH_ERRORS);
declareErrors('TerminalSocket_open', {
  400: ['INVALID_TERMINAL_SIZE'],
  401: ['INVALID_PTY_TOKEN'],
  404: ['SESSION_NOT_FOUND'],
  409: ['SESSION_ENDED'],
  422: ['TERMINALS_UNSUPPORTED', 'TERMINAL_NOT_OPENED'],
  426: ['UPGRADE_REQUIRED'],
  429: ['TERMINAL_LIMIT'],
  503: ['NO_WORKER_AVAILABLE', 'SANDBOX_UNAVAILABLE', 'SESSION_MOVED'],
  502: ['WORKER_FAILED'],
});
