import { ApiProperty } from '@nestjs/swagger';
import {
  AGENT_BUILTIN_TOOLS,
  AGENT_BUNDLE_FORMAT,
  AGENT_BUNDLE_VERSION,
  type AgentBuiltinTool,
  type AgentBundle,
  type AgentView,
  type BackendRouteConfig,
  type PortableAgent,
  type PythonToolModule,
  type PythonToolSpec,
} from '@drydock/agents';
import { NetworkPolicyResponse } from '../../sessions/dto/session.response.js';
import { BackendRouteDto } from './agent.dto.js';

// The response shapes of /v1/agents, for the OpenAPI document. Each implements the view
// the controller returns, so the compiler keeps them in step. (A backend route is a union
// type no class can implement; its fields are typed BackendRouteConfig[] and documented
// with BackendRouteDto.)

export class PythonToolFunctionResponse implements PythonToolSpec {
  @ApiProperty({ example: 'monthly_totals', description: 'The tool name the model calls.' })
  name: string;

  @ApiProperty({ description: "From the function's docstring." })
  description: string;

  @ApiProperty({
    type: 'object',
    additionalProperties: true,
    description: 'The JSON Schema of the arguments: {type: "object", properties, required, additionalProperties: false}.',
  })
  parameters: PythonToolSpec['parameters'];

  @ApiProperty({ type: [String], description: 'The required parameters (the same as parameters.required).' })
  required: string[];
}

export class PythonModuleResponse implements PythonToolModule {
  @ApiProperty({ example: 'sales_tools' }) name: string;
  @ApiProperty({ description: 'The whole module source, as sent.' }) source: string;
  @ApiProperty({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the source (UTF-8).' }) sha256: string;

  @ApiProperty({ type: () => [PythonToolFunctionResponse], description: 'The public top-level functions, derived in a sandbox.' })
  functions: PythonToolFunctionResponse[];
}

export class AgentResponse implements AgentView {
  @ApiProperty({ example: 'agt_01J…' }) id: string;
  @ApiProperty() name: string;
  @ApiProperty() instructions: string;
  @ApiProperty({ example: 'default' }) model: string;

  @ApiProperty({ type: 'array', items: { type: 'string', enum: [...AGENT_BUILTIN_TOOLS] } })
  tools: AgentBuiltinTool[];

  @ApiProperty({ type: () => [BackendRouteDto] })
  backendRoutes: BackendRouteConfig[];

  @ApiProperty({ type: () => [PythonModuleResponse] })
  pythonModules: PythonModuleResponse[];

  @ApiProperty({ type: 'string', nullable: true, description: 'The template its sessions start from.' }) template: string | null;

  @ApiProperty({ type: () => NetworkPolicyResponse, nullable: true, description: 'The hosts its sessions\' code may reach (docs/network.md); null: no network.' })
  network: NetworkPolicyResponse | null;

  @ApiProperty({ enum: ['runc', 'gvisor'], nullable: true, description: "The isolation tier of its sessions; null: the tenant's default." })
  tier: 'runc' | 'gvisor' | null;

  @ApiProperty({ enum: ['hibernate', 'end'], nullable: true, description: "What its sessions come to when idle; null: the deployment's SESSION_IDLE_ACTION." })
  idleAction: 'hibernate' | 'end' | null;

  @ApiProperty({ format: 'date-time' }) createdAt: string;
  @ApiProperty({ format: 'date-time' }) updatedAt: string;
}

export class AgentListResponse {
  @ApiProperty({ type: () => [AgentResponse], description: 'Oldest first.' })
  agents: AgentResponse[];
}

export class PortableAgentResponse implements PortableAgent {
  @ApiProperty() name: string;
  @ApiProperty() instructions: string;
  @ApiProperty() model: string;
  @ApiProperty({ type: [String] }) tools: string[];
  @ApiProperty({ type: () => [BackendRouteDto] }) backendRoutes: BackendRouteConfig[];
  @ApiProperty({ type: () => [PythonModuleResponse] }) pythonModules: PythonModuleResponse[];
}

// What GET /v1/agents/:id/export answers and POST /v1/agents/import takes.
export class AgentBundleResponse implements AgentBundle {
  @ApiProperty({ enum: [AGENT_BUNDLE_FORMAT] })
  format: typeof AGENT_BUNDLE_FORMAT;

  @ApiProperty({ enum: [AGENT_BUNDLE_VERSION], type: 'integer' })
  version: typeof AGENT_BUNDLE_VERSION;

  @ApiProperty({ type: () => PortableAgentResponse })
  agent: PortableAgentResponse;

  @ApiProperty({ pattern: '^[0-9a-f]{64}$', description: 'SHA-256 of the canonical JSON of agent (sorted keys, no whitespace).' })
  sha256: string;
}
