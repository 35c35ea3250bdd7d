import { Body, Controller, Get, HttpCode, Param, Post, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiProduces } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TenantPrincipal } from '@drydock/core';
import type { ExecutionView } from '@drydock/execution';
import { SessionExecutionsService } from '@drydock/sessions';
import { Principal } from '../auth/principal.decorator.js';
import { RequestCountedByHandler } from '../auth/request-counted-by-handler.decorator.js';
import { TenantRoutes } from '../openapi/api-auth.js';
import { ApiErrors, VALIDATION_ERRORS } from '../openapi/api-errors.js';
import { ExecutionResponse, InterruptResponse, SessionInterruptResponse } from './dto/execution.response.js';
import { CreateExecutionDto } from './dto/create-execution.dto.js';
import { streamRun } from './stream-run.js';

@Controller('v1')
@TenantRoutes('executions')
export class ExecutionsController {
  constructor(private readonly executions: SessionExecutionsService) {}

  @Post('sessions/:id/executions')
  @RequestCountedByHandler()
  @ApiOperation({
    summary: "Run Python in the session's REPL and answer the execution record",
    description:
      'With `Accept: text/event-stream` the answer is server-sent events instead: `stdout` and `stderr` ({text}) as the code prints, ' +
      'then `result` and/or `error`, then `done` with the whole record. An error after the first event arrives as an `error` event ({code, message}).',
  })
  @ApiHeader({ name: 'Accept', required: false, description: '`text/event-stream` to stream the output.' })
  @ApiProduces('application/json', 'text/event-stream')
  @ApiOkResponse({
    description: 'The finished run (any status: ok, error, timeout, memory, killed), or its event stream.',
    content: {
      'application/json': { schema: { $ref: '#/components/schemas/ExecutionResponse' } },
      'text/event-stream': { schema: { type: 'string', description: 'event: stdout|stderr|result|error|done, data: JSON' } },
    },
  })
  @ApiErrors({
    ...VALIDATION_ERRORS,
    404: ['SESSION_NOT_FOUND'],
    409: ['SESSION_ENDED', 'IDEMPOTENCY_KEY_REUSED'],
    429: ['RATE_LIMITED'],
    502: ['WORKER_FAILED'],
    503: ['NO_WORKER_AVAILABLE', 'SANDBOX_UNAVAILABLE', 'SESSION_MOVED'],
    504: ['EXECUTION_WAIT_TIMEOUT'],
  })
  async execute(
    @Principal() principal: TenantPrincipal,
    @Param('id') sessionId: string,
    @Body() dto: CreateExecutionDto,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    if (!(req.headers.accept ?? '').includes('text/event-stream')) {
      const view = await this.executions.execute(principal, sessionId, dto, undefined, { countRequest: true });
      void reply.status(200).send(view);
      return;
    }
    await this.stream(principal, sessionId, dto, reply);
  }

  @Get('executions/:id')
  @ApiOperation({ summary: 'One execution record (e.g. after EXECUTION_WAIT_TIMEOUT)' })
  @ApiOkResponse({ type: ExecutionResponse })
  @ApiErrors({ 404: ['EXECUTION_NOT_FOUND'] })
  get(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<ExecutionView> {
    return this.executions.get(principal.tenantId, id);
  }

  @Post('executions/:id/interrupt')
  @HttpCode(202)
  @ApiOperation({
    summary: 'Stop an execution that is running or waiting for its turn',
    description:
      'The code gets a KeyboardInterrupt, as in a notebook, and the session keeps its variables; processes the code started are ended. ' +
      'Code that ignores the interrupt is stopped after a second with its interpreter (the run ends `killed`, the next one has `stateLost`). ' +
      'An execution still waiting behind another never runs. The answer comes at once; the execution\'s record says how it ended.',
  })
  @ApiAcceptedResponse({ type: InterruptResponse })
  @ApiErrors({ 404: ['EXECUTION_NOT_FOUND', 'SESSION_NOT_FOUND'] })
  async interrupt(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<InterruptResponse> {
    const { execution, requested } = await this.executions.interrupt(principal.tenantId, id);
    return { id: execution.id, status: execution.status, requested };
  }

  @Post('sessions/:id/interrupt')
  @HttpCode(202)
  @ApiOperation({
    summary: "Stop whatever runs in the session, like a notebook's interrupt",
    description:
      'Every execution of the session that is running or waiting for its turn is interrupted as by POST /v1/executions/:id/interrupt. ' +
      'The answer comes at once and lists them; each one\'s record says how it ended.',
  })
  @ApiAcceptedResponse({ type: SessionInterruptResponse })
  @ApiErrors({ 404: ['SESSION_NOT_FOUND'] })
  async interruptSession(@Principal() principal: TenantPrincipal, @Param('id') sessionId: string): Promise<SessionInterruptResponse> {
    return { sessionId, interrupted: await this.executions.interruptSession(principal.tenantId, sessionId) };
  }

  // Server-sent events: `stdout`/`stderr` chunks as they happen, then `result` and/or
  // `error`, then `done` with the full record (streamRun).
  private stream(principal: TenantPrincipal, sessionId: string, dto: CreateExecutionDto, reply: FastifyReply): Promise<void> {
    return streamRun(
      reply,
      (onOutput) => this.executions.execute(principal, sessionId, dto, onOutput, { countRequest: true }),
      (view, sse) => {
        if (view.result) sse.send('result', view.result);
        if (view.error) sse.send('error', view.error);
      },
    );
  }
}
