import { Body, Controller, Param, Post, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import type { TenantPrincipal } from '@drydock/core';
import { ApiKeyAuthGuard } from '../auth/api-key-auth.guard.js';
import { Principal } from '../auth/principal.decorator.js';
import { SseWriter } from '../executions/sse-writer.js';
import { ErrorResponseFilter } from '../http/error-response.filter.js';
import { RunCreateDto } from './dto/run-create.dto.js';
import { LangGraphRunsService, type PreparedRun } from './langgraph-runs.service.js';
import { toWire } from './message-serializer.js';
import { abortOnClose, JsonKeepAlive } from './run-response.js';
import { LangGraphThreadIdPipe } from './thread-id.pipe.js';

// How often an idle run answer shows it is alive (a newline for runs/wait, an SSE
// comment for runs/stream).
const KEEP_ALIVE_MS = 10_000;

// LangGraph Platform API: runs on a thread, one at a time. Refusals (400, 404, 409
// THREAD_BUSY, 503) are ordinary JSON errors; the run itself stops when the client
// disconnects.
@Controller('threads/:thread_id/runs')
@UseGuards(ApiKeyAuthGuard)
export class RunsController {
  constructor(private readonly runs: LangGraphRunsService) {}

  // The thread's state values when the run ends.
  @Post('wait')
  async wait(
    @Principal() principal: TenantPrincipal,
    @Param('thread_id', LangGraphThreadIdPipe) threadId: string,
    @Body() dto: RunCreateDto,
    @Res() res: Response,
  ): Promise<void> {
    const run = await this.runs.prepare(principal.tenantId, threadId, dto, 'wait');
    locate(res, run);
    const abort = abortOnClose(res);
    const keepAlive = new JsonKeepAlive(res, KEEP_ALIVE_MS);
    try {
      keepAlive.finish(toWire(await run.execute(abort.signal)));
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
  async stream(
    @Principal() principal: TenantPrincipal,
    @Param('thread_id', LangGraphThreadIdPipe) threadId: string,
    @Body() dto: RunCreateDto,
    @Res() res: Response,
  ): Promise<void> {
    const run = await this.runs.prepare(principal.tenantId, threadId, dto, 'stream');
    locate(res, run);
    const abort = abortOnClose(res);
    const sse = new SseWriter(res);
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

// Where the SDK learns the run id (its onRunCreated callback).
function locate(res: Response, run: PreparedRun): void {
  res.setHeader('Content-Location', `/threads/${run.threadId}/runs/${run.runId}`);
}
