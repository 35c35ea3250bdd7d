import { Body, Controller, Get, Param, Post, Req, Res, UseGuards } from '@nestjs/common';
import type { Request, Response } from 'express';
import type { TenantPrincipal } from '@drydock/core';
import type { ExecutionView, StreamEvent } from '@drydock/execution';
import { SessionExecutionsService } from '@drydock/sessions';
import { Principal } from '../auth/principal.decorator.js';
import { TenantAuthGuard } from '../auth/tenant-auth.guard.js';
import { ErrorResponseFilter } from '../http/error-response.filter.js';
import { CreateExecutionDto } from './dto/create-execution.dto.js';
import { SseWriter } from './sse-writer.js';

@Controller('v1')
@UseGuards(TenantAuthGuard)
export class ExecutionsController {
  constructor(private readonly executions: SessionExecutionsService) {}

  @Post('sessions/:id/executions')
  async execute(
    @Principal() principal: TenantPrincipal,
    @Param('id') sessionId: string,
    @Body() dto: CreateExecutionDto,
    @Req() req: Request,
    @Res() res: Response,
  ): Promise<void> {
    if (!(req.headers.accept ?? '').includes('text/event-stream')) {
      const view = await this.executions.execute(principal, sessionId, dto);
      res.status(200).json(view);
      return;
    }
    await this.stream(principal, sessionId, dto, res);
  }

  @Get('executions/:id')
  get(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<ExecutionView> {
    return this.executions.get(principal.tenantId, id);
  }

  // Server-sent events: `stdout`/`stderr` chunks as they happen, then `result` and/or
  // `error`, then `done` with the full record. Errors before the first event are
  // ordinary JSON error responses; after it they arrive as an `error` event.
  private async stream(principal: TenantPrincipal, sessionId: string, dto: CreateExecutionDto, res: Response) {
    const sse = new SseWriter(res);
    try {
      const view = await this.executions.execute(principal, sessionId, dto, (event: StreamEvent) =>
        sse.send(event.name, { text: event.text }),
      );
      if (view.result) sse.send('result', view.result);
      if (view.error) sse.send('error', view.error);
      sse.send('done', view);
      sse.end();
    } catch (error) {
      if (!sse.started) throw error;
      sse.send('error', new ErrorResponseFilter().toResponse(error).body.error);
      sse.end();
    }
  }
}
