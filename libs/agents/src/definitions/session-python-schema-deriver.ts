import { Injectable } from '@nestjs/common';
import { TenantsService } from '@drydock/core';
import type { ExecutionView } from '@drydock/execution';
import { SessionExecutionsService, SessionsService } from '@drydock/sessions';
import { buildDeriveSchemaCode } from '../python-tools/derive-schema-script.js';
import { PythonToolError } from '../python-tools/python-tools.errors.js';
import { parseDerivedSchemas, type DerivedSchemas } from '../python-tools/tool-module.js';
import { AGENT_TOOLS_THREAD_ID } from './agent-definition.js';
import { AgentDefinitionError } from './agent-definitions.errors.js';
import type { PythonSchemaDeriver } from './python-schema-deriver.js';

// Runs derive_schema.py in the tenant's own sandbox, in the session of the reserved
// thread __agent_tools__ (created on first use, reused while it lives). The module is
// only parsed there with `ast`, never run; what comes back is checked like any input,
// since tenant code can reach that session too.
@Injectable()
export class SessionPythonSchemaDeriver implements PythonSchemaDeriver {
  constructor(
    private readonly tenants: TenantsService,
    private readonly sessions: SessionsService,
    private readonly executions: SessionExecutionsService,
  ) {}

  async derive(tenantId: string, module: string, source: string): Promise<DerivedSchemas> {
    const tenant = await this.tenants.get(tenantId);
    const { session } = await this.sessions.create(tenantId, { threadId: AGENT_TOOLS_THREAD_ID });
    const view = await this.executions.execute({ tenantId, limits: tenant.limits }, session.id, {
      code: buildDeriveSchemaCode(source),
    });
    return parseDerivedSchemas(outputOf(module, view));
  }
}

function outputOf(module: string, view: ExecutionView): string {
  switch (view.status) {
    case 'ok':
      break;
    case 'timeout':
      throw AgentDefinitionError.derivationFailed(module, 'it did not finish within the time limit.');
    case 'memory':
      throw AgentDefinitionError.derivationFailed(module, 'the sandbox ran out of memory.');
    case 'killed':
      throw AgentDefinitionError.derivationFailed(module, 'the sandbox was stopped during the run; try again.');
    default: {
      const error = view.error ? `${view.error.name}: ${view.error.value}` : 'an unknown error';
      throw AgentDefinitionError.derivationFailed(module, `the script failed with ${error}.`);
    }
  }
  const text = view.result?.text;
  if (view.truncated) throw PythonToolError.invalidOutput('schema derivation result', 'it was cut at the output size limit.');
  if (typeof text !== 'string') throw PythonToolError.invalidOutput('schema derivation result', 'it is empty.');
  return text;
}
