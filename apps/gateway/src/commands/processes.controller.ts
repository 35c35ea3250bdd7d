import { Body, Controller, Get, HttpCode, Param, Post, Query, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiBody, ApiConsumes, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiQuery } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TenantPrincipal } from '@drydock/core';
import { SessionProcessesService, type ProcessView } from '@drydock/sessions';
import { Principal } from '../auth/principal.decorator.js';
import { TenantRoutes } from '../openapi/api-auth.js';
import { ApiErrors, VALIDATION_ERRORS } from '../openapi/api-errors.js';
import { SseWriter } from '../executions/sse-writer.js';
import { ErrorResponseFilter } from '../http/error-response.filter.js';
import { MAX_STDIN_BYTES } from '../http/body-parsing.js';
import { ProcessListResponse, ProcessResponse, SignalDeliveredResponse } from './dto/process.response.js';
import { ProcessSignalDto } from './dto/process-signal.dto.js';

// Background processes of a session (commands started with `background: true`): list,
// read their output as it comes, write their stdin, signal them.
@Controller('v1/sessions/:id/processes')
@TenantRoutes('commands')
export class ProcessesController {
  constructor(private readonly processes: SessionProcessesService) {}

  @Get()
  @ApiOperation({ summary: "The session's background processes, newest first" })
  @ApiOkResponse({ type: ProcessListResponse })
  @ApiErrors({ 404: ['SESSION_NOT_FOUND'] })
  async list(@Principal() principal: TenantPrincipal, @Param('id') sessionId: string): Promise<{ processes: ProcessView[] }> {
    return { processes: await this.processes.list(principal.tenantId, sessionId) };
  }

  @Get(':processId')
  @ApiOperation({ summary: 'One background process' })
  @ApiOkResponse({ type: ProcessResponse })
  @ApiErrors({ 404: ['SESSION_NOT_FOUND', 'PROCESS_NOT_FOUND'] })
  get(@Principal() principal: TenantPrincipal, @Param('id') sessionId: string, @Param('processId') processId: string): Promise<ProcessView> {
    return this.processes.get(principal.tenantId, sessionId, processId);
  }

  @Get(':processId/output')
  @ApiOperation({
    summary: "A background process's output: what was kept so far, then live, then its exit",
    description:
      'Server-sent events: `stdout` and `stderr` ({text}) from its start (the sandbox keeps the newest 1 MiB of each process), then as it writes, ' +
      'then `exit` ({exitCode, signal}) when it ends, and the stream closes. A process that has ended answers its kept output and `exit` at once.',
  })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ content: { 'text/event-stream': { schema: { type: 'string', description: 'event: stdout|stderr|exit|error, data: JSON' } } } })
  @ApiErrors({ 404: ['SESSION_NOT_FOUND', 'PROCESS_NOT_FOUND'] })
  async output(
    @Principal() principal: TenantPrincipal,
    @Param('id') sessionId: string,
    @Param('processId') processId: string,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    const sse = new SseWriter(reply);
    const closed = new AbortController();
    req.raw.on('close', () => closed.abort());
    try {
      // The headers go out at once: a quiet process still has a stream open.
      await this.processes.get(principal.tenantId, sessionId, processId);
      sse.open();
      await this.processes.stream(
        principal.tenantId,
        sessionId,
        processId,
        (event) => (event.kind === 'chunk' ? sse.send(event.name, { text: event.text }) : sse.send('exit', { exitCode: event.exitCode, signal: event.signal })),
        closed.signal,
      );
      sse.end();
    } catch (error) {
      if (!sse.started) throw error;
      sse.send('error', new ErrorResponseFilter().toResponse(error).body.error);
      sse.end();
    }
  }

  @Post(':processId/stdin')
  @HttpCode(204)
  @ApiOperation({ summary: "Write to a background process's standard input", description: `The body's bytes (any type, at most ${MAX_STDIN_BYTES} bytes) are written as they are; \`?eof=true\` closes its input after them.` })
  @ApiConsumes('application/octet-stream', 'text/plain')
  @ApiBody({ schema: { type: 'string', format: 'binary' } })
  @ApiQuery({ name: 'eof', required: false, type: Boolean })
  @ApiNoContentResponse({ description: 'Queued for the process (it reads it when it wants).' })
  @ApiErrors({ 404: ['SESSION_NOT_FOUND', 'PROCESS_NOT_FOUND'], 409: ['PROCESS_NOT_RUNNING', 'PROCESS_STDIN_CLOSED'], 413: ['BODY_TOO_LARGE'], 429: ['PROCESS_STDIN_FULL'] })
  async stdin(
    @Principal() principal: TenantPrincipal,
    @Param('id') sessionId: string,
    @Param('processId') processId: string,
    @Query('eof') eof: string | undefined,
    @Req() req: FastifyRequest,
  ): Promise<void> {
    const body = Buffer.isBuffer(req.body) ? req.body : Buffer.alloc(0);
    await this.processes.writeStdin(principal.tenantId, sessionId, processId, body, eof === 'true' || eof === '1');
  }

  @Post(':processId/signal')
  @HttpCode(202)
  @ApiOperation({ summary: 'Send a signal to a background process and its group' })
  @ApiAcceptedResponse({ type: SignalDeliveredResponse })
  @ApiErrors({ ...VALIDATION_ERRORS, 404: ['SESSION_NOT_FOUND', 'PROCESS_NOT_FOUND'], 409: ['PROCESS_NOT_RUNNING'] })
  signal(
    @Principal() principal: TenantPrincipal,
    @Param('id') sessionId: string,
    @Param('processId') processId: string,
    @Body() dto: ProcessSignalDto,
  ): Promise<{ delivered: boolean }> {
    return this.processes.signal(principal.tenantId, sessionId, processId, dto.signal);
  }
}
