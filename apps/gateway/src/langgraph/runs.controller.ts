import { Body, Controller, Param, Post, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation, ApiProduces } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { TenantPrincipal } from '@drydock/core';
import { Principal } from '../auth/principal.decorator.js';
import { SseWriter } from '../executions/sse-writer.js';
import { ErrorResponseFilter } from '../http/error-response.filter.js';
import { LangGraphRoutes } from '../openapi/api-auth.js';
import { ApiErrors, type ErrorCodes, VALIDATION_ERRORS } from '../openapi/api-errors.js';
import { RunCreateDto } from './dto/run-create.dto.js';
import { LangGraphRunsService, type PreparedRun } from './langgraph-runs.service.js';
import { wireJsonChunks } from './message-serializer.js';
import { abortOnClose, JsonKeepAlive } from './run-response.js';
import { LangGraphThreadIdPipe } from './thread-id.pipe.js';

// How often an idle run answer shows it is alive (a newline for runs/wait, an SSE
// comment for runs/stream).
const KEEP_ALIVE_MS = 10_000;

// Refusals before the run starts, on both routes (plain JSON errors).
const RUN_REFUSALS: ErrorCodes = {
  ...VALIDATION_ERRORS,
  400: [
    ...VALIDATION_ERRORS[400]!,
    'INVALID_THREAD_ID',
    'INVALID_CHECKPOINT_ID',
    'INVALID_INPUT',
    'INVALID_STREAM_MODE',
    'UNSUPPORTED_OPTION',
  ],
  404: ['THREAD_NOT_FOUND', 'AGENT_NOT_FOUND'],
  409: ['THREAD_BUSY'],
  503: ['AGENT_UNAVAILABLE', 'MODEL_NOT_CONFIGURED', 'RUN_NOT_CONFIRMED'],
};

const CONTENT_LOCATION = {
  'Content-Location': {
    description: '/threads/:thread_id/runs/:run_id: the run id (the SDK\'s onRunCreated reads it).',
    schema: { type: 'string' },
  },
};

// LangGraph Platform API: runs on a thread, one at a time. Refusals (400, 404, 409
// THREAD_BUSY, 503) are ordinary JSON errors; the run itself stops when the client
// disconnects.
@Controller('threads/:thread_id/runs')
@LangGraphRoutes('langgraph')
export class RunsController {
  constructor(private readonly runs: LangGraphRunsService) {}

  // The thread's state values when the run ends.
  @Post('wait')
  @ApiOperation({ summary: "Run an assistant on a thread and answer the thread's state values when the run ends" })
  @ApiOkResponse({
    description:
      "The thread's state values when the run ends (e.g. {messages: [...]}). A run longer than 10 s gets the 200 headers " +
      'and a newline every 10 s while it runs; a failure after that is the body {"__error__": {"error": code, "message"}}.',
    headers: CONTENT_LOCATION,
    schema: { type: 'object', additionalProperties: true },
  })
  @ApiErrors({ ...RUN_REFUSALS, 422: ['RECURSION_LIMIT'], 502: ['RUN_FAILED'] })
  async wait(
    @Principal() principal: TenantPrincipal,
    @Param('thread_id', LangGraphThreadIdPipe) threadId: string,
    @Body() dto: RunCreateDto,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const run = await this.runs.prepare(principal.tenantId, threadId, dto, 'wait');
    locate(reply, run);
    const abort = abortOnClose(reply.raw);
    const keepAlive = new JsonKeepAlive(reply, KEEP_ALIVE_MS);
    try {
      keepAlive.finishJson(wireJsonChunks(await run.execute(abort.signal)));
    } catch (error) {
      if (!keepAlive.started) throw error;
      const { code, message } = new ErrorResponseFilter().toResponse(error).body.error;
      keepAlive.finish({ __error__: { error: code, message } });
    } finally {
      keepAlive.stop();
      abort.dispose();
    }
  }

  // Server-sent events: `metadata` {run_id, thread_id}, the events of the requested
  // stream modes (run-events.ts), then `end`; a failure after the first event is an
  // `error` event {error: code, message}.
  @Post('stream')
  @ApiOperation({ summary: 'Run an assistant on a thread and stream its progress as server-sent events' })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({
    description:
      'Server-sent events: first `metadata` {run_id, thread_id, attempt}; then, per stream_mode, `values` (the full state ' +
      'after each step), `updates` ({node: update} after each node), `messages/metadata` ({[message_id]: {metadata}}), ' +
      '`messages/partial` ([message so far]) and `messages/complete` ([messages]) for "messages", `messages` ' +
      '([message chunk, metadata]) for "messages-tuple"; last `end` (no data), or `error` {error: code, message} when the ' +
      'run fails after the stream started (e.g. RECURSION_LIMIT, RUN_FAILED). An idle stream gets an SSE comment every 10 s.',
    headers: CONTENT_LOCATION,
    content: { 'text/event-stream': { schema: { type: 'string' } } },
  })
  @ApiErrors(RUN_REFUSALS)
  async stream(
    @Principal() principal: TenantPrincipal,
    @Param('thread_id', LangGraphThreadIdPipe) threadId: string,
    @Body() dto: RunCreateDto,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const run = await this.runs.prepare(principal.tenantId, threadId, dto, 'stream');
    locate(reply, run);
    const res = reply.raw;
    const abort = abortOnClose(res);
    const sse = new SseWriter(reply);
    const ping = setInterval(() => {
      if (sse.started && !res.writableEnded) res.write(': keep-alive\n\n');
    }, KEEP_ALIVE_MS);
    try {
      await run.execute(abort.signal, (event) => {
        if (!res.writableEnded && !res.destroyed) sse.send(event.event, event.data);
      });
      sse.send('end', null);
    } catch (error) {
      if (abort.signal.aborted) return;
      const { code, message } = new ErrorResponseFilter().toResponse(error).body.error;
      sse.send('error', { error: code, message });
    } finally {
      clearInterval(ping);
      abort.dispose();
      if (!res.writableEnded) sse.end();
    }
  }
}

// Where the SDK learns the run id (its onRunCreated callback). Set on Node's response, so
// that it goes out however the run is answered (written by the handler, or an error).
function locate(reply: FastifyReply, run: PreparedRun): void {
  reply.raw.setHeader('Content-Location', `/threads/${run.threadId}/runs/${run.runId}`);
}
