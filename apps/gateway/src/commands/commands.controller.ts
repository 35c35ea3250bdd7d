import { Body, Controller, Param, Post, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiHeader, ApiOkResponse, ApiOperation, ApiProduces } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TenantPrincipal } from '@drydock/core';
import { SessionCommandsService } from '@drydock/sessions';
import { Principal } from '../auth/principal.decorator.js';
import { RequestCountedByHandler } from '../auth/request-counted-by-handler.decorator.js';
import { TenantRoutes } from '../openapi/api-auth.js';
import { ApiErrors, VALIDATION_ERRORS } from '../openapi/api-errors.js';
import { streamRun } from '../executions/stream-run.js';
import { CreateCommandDto } from './dto/create-command.dto.js';
import { ProcessStartedResponse } from './dto/process.response.js';

// Shell commands in a session (API.md "Commands, processes and terminals"): a process
// the session's supervisor starts beside the REPL, as the sandbox user, under the
// session's limits (docs/decisions/015-commands-over-the-host-channel.md).
@Controller('v1')
@TenantRoutes('commands')
export class CommandsController {
  constructor(private readonly commands: SessionCommandsService) {}

  @Post('sessions/:id/commands')
  @RequestCountedByHandler()
  @ApiOperation({
    summary: 'Run a shell command or a program in the session and answer its record',
    description:
      '`command` is run by `/bin/bash -c`; `argv` runs a program without a shell. It runs as the sandbox user in /session (or `cwd`), ' +
      "beside the REPL, whose variables it never touches. The record has the exit code, the output (capped like executions'), the files it " +
      'changed under /session (now in the thread) and the artifacts it left. `status` is `ok` when it exited 0, `error` for another exit or a signal, ' +
      '`timeout` when it reached its time limit (its whole process group is killed), `memory` when the sandbox ran out of memory. Processes it ' +
      'left running are killed when it returns. With `Accept: text/event-stream` the answer is `stdout`/`stderr` events ({text}) as it writes, then `done` with the record. ' +
      'With `background: true` it starts a background process and answers 202 `{id, pid, status: "running"}` at once: the process runs beside everything else ' +
      '(no time limit) until it exits, is signalled, or the session ends; see /v1/sessions/:id/processes.',
  })
  @ApiHeader({ name: 'Accept', required: false, description: '`text/event-stream` to stream the output.' })
  @ApiProduces('application/json', 'text/event-stream')
  @ApiAcceptedResponse({ type: ProcessStartedResponse, description: '`background: true`: the process started.' })
  @ApiOkResponse({
    description: 'The finished command (any status), or its event stream.',
    content: {
      'application/json': { schema: { $ref: '#/components/schemas/ExecutionResponse' } },
      'text/event-stream': { schema: { type: 'string', description: 'event: stdout|stderr|error|done, data: JSON' } },
    },
  })
  @ApiErrors({
    ...VALIDATION_ERRORS,
    400: [...VALIDATION_ERRORS[400]!, 'INVALID_COMMAND', 'INVALID_CWD', 'INVALID_ENV'],
    404: ['SESSION_NOT_FOUND'],
    409: ['SESSION_ENDED', 'IDEMPOTENCY_KEY_REUSED'],
    422: ['BACKGROUND_UNSUPPORTED', 'PROCESS_NOT_STARTED'],
    429: ['RATE_LIMITED', 'PROCESS_LIMIT'],
    502: ['WORKER_FAILED'],
    503: ['NO_WORKER_AVAILABLE', 'SANDBOX_UNAVAILABLE', 'SESSION_MOVED'],
    504: ['EXECUTION_WAIT_TIMEOUT'],
  })
  async run(
    @Principal() principal: TenantPrincipal,
    @Param('id') sessionId: string,
    @Body() dto: CreateCommandDto,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    if (dto.background) {
      const view = await this.commands.run(principal, sessionId, dto, undefined, { countRequest: true });
      // Started: its id and pid; one that never started (its sandbox could not be made)
      // is answered with its record.
      if (view.status === 'running') void reply.status(202).send({ id: view.id, pid: view.pid ?? null, status: 'running' });
      else void reply.status(200).send(view);
      return;
    }
    const input = dto;
    if (!(req.headers.accept ?? '').includes('text/event-stream')) {
      const view = await this.commands.run(principal, sessionId, input, undefined, { countRequest: true });
      void reply.status(200).send(view);
      return;
    }
    await streamRun(reply, (onOutput) => this.commands.run(principal, sessionId, input, onOutput, { countRequest: true }));
  }
}
