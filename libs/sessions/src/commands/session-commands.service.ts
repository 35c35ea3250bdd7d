import { Injectable } from '@nestjs/common';
import type { TenantPrincipal } from '@drydock/core';
import type { ExecutionView, StreamEvent } from '@drydock/execution';
import { SessionExecutionsService } from '../session-executions.service.js';
import { canonicalCommand, commandSpecOf, type CommandInput } from './command-spec.js';

// Commands in a session (POST /v1/sessions/:id/commands): a process started by the
// session's supervisor beside the REPL (docs/decisions/015-commands-over-the-host-channel.md).
// A command is an execution of kind `command`: the same admission, lane, idempotency,
// record, file sync, artifacts, usage and metrics as Python code.
@Injectable()
export class SessionCommandsService {
  constructor(private readonly executions: SessionExecutionsService) {}

  run(
    principal: Pick<TenantPrincipal, 'tenantId' | 'limits'>,
    sessionId: string,
    input: CommandInput & { timeoutMs?: number; idempotencyKey?: string; background?: boolean },
    onOutput?: (event: StreamEvent) => void,
    options: { countRequest?: boolean; signal?: AbortSignal } = {},
  ): Promise<ExecutionView> {
    const spec = commandSpecOf(input);
    const background = input.background === true;
    return this.executions.execute(
      principal,
      sessionId,
      { code: canonicalCommand(spec, background), process: spec, background, timeoutMs: input.timeoutMs, idempotencyKey: input.idempotencyKey },
      onOutput,
      options,
    );
  }
}
