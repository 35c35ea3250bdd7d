import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiBody, ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { TenantPrincipal } from '@drydock/core';
import { AgentDefinitionsService, toAgentView, type AgentBundle, type AgentView } from '@drydock/agents';
import { Principal } from '../auth/principal.decorator.js';
import { TenantRoutes } from '../openapi/api-auth.js';
import { networkOption } from '../http/network-option.js';
import { ApiErrors, type ErrorCodes, VALIDATION_ERRORS } from '../openapi/api-errors.js';
import { CreateAgentDto, UpdateAgentDto } from './dto/agent.dto.js';
import { AgentBundleResponse, AgentListResponse, AgentResponse } from './dto/agent.response.js';

// Refusals of a definition's fields (create, update; import checks the same fields).
const FIELD_ERRORS = ['INVALID_AGENT_DEFINITION', 'UNKNOWN_TOOL', 'INVALID_BACKEND_CONFIG'];

// Create and update derive the Python modules' tool schemas in a session of the tenant.
const MODULE_ERRORS: ErrorCodes = {
  ...VALIDATION_ERRORS,
  400: [...VALIDATION_ERRORS[400]!, ...FIELD_ERRORS, 'INVALID_TOOL_MODULE', 'INVALID_NETWORK_POLICY'],
  403: ['NETWORK_FORBIDDEN'],
  409: ['AGENT_NAME_TAKEN'],
  422: [
    'NETWORK_NOT_ALLOWED',
    'TIER_NOT_AVAILABLE',
    'TIER_NOT_ALLOWED',
    'PYTHON_SYNTAX_ERROR',
    'PYTHON_VARARGS_NOT_SUPPORTED',
    'PYTHON_POSITIONAL_ONLY_NOT_SUPPORTED',
    'PYTHON_INVALID_TOOL_NAME',
    'PYTHON_UNSUPPORTED_SIGNATURE',
    'PYTHON_NO_PUBLIC_FUNCTIONS',
    'TOOL_NAME_CONFLICT',
  ],
  429: ['SESSION_QUOTA_EXCEEDED'],
  502: ['SCHEMA_DERIVATION_FAILED', 'INVALID_SANDBOX_OUTPUT', 'WORKER_FAILED'],
  503: ['NO_WORKER_AVAILABLE', 'SANDBOX_UNAVAILABLE', 'SESSION_MOVED'],
  504: ['EXECUTION_WAIT_TIMEOUT'],
};

// Agent definitions of the caller's tenant; another tenant's agent is AGENT_NOT_FOUND.
@Controller('v1/agents')
@TenantRoutes('agents')
export class AgentsController {
  constructor(private readonly agents: AgentDefinitionsService) {}

  @Post()
  @ApiOperation({ summary: 'Create an agent definition (its Python modules are parsed in a sandbox to derive tool schemas)' })
  @ApiCreatedResponse({ type: AgentResponse })
  @ApiErrors(MODULE_ERRORS)
  async create(@Principal() principal: TenantPrincipal, @Body() dto: CreateAgentDto): Promise<AgentView> {
    return toAgentView(await this.agents.create(principal.tenantId, { ...dto, network: networkOption(dto.network) }));
  }

  @Get()
  @ApiOperation({ summary: "The tenant's agent definitions, oldest first" })
  @ApiOkResponse({ type: AgentListResponse })
  async list(@Principal() principal: TenantPrincipal): Promise<{ agents: AgentView[] }> {
    return { agents: (await this.agents.list(principal.tenantId)).map(toAgentView) };
  }

  // The body is a bundle from GET /v1/agents/:id/export, checked by importAgentBundle.
  @Post('import')
  @ApiOperation({ summary: 'Create an agent definition from a bundle of GET /v1/agents/:id/export (a new id in this tenant)' })
  @ApiBody({ type: AgentBundleResponse, description: 'The bundle, as exported.' })
  @ApiCreatedResponse({ type: AgentResponse })
  @ApiErrors({
    400: ['INVALID_JSON', 'BUNDLE_INVALID', 'BUNDLE_UNSUPPORTED_VERSION', ...FIELD_ERRORS],
    409: ['AGENT_NAME_TAKEN'],
    413: ['BODY_TOO_LARGE'],
    422: ['BUNDLE_MODULE_HASH_MISMATCH', 'BUNDLE_HASH_MISMATCH', 'BUNDLE_FUNCTION_MISSING', 'TOOL_NAME_CONFLICT'],
  })
  async import(@Principal() principal: TenantPrincipal, @Body() bundle: unknown): Promise<AgentView> {
    return toAgentView(await this.agents.import(principal.tenantId, bundle));
  }

  @Get(':id')
  @ApiOperation({ summary: 'One agent definition' })
  @ApiOkResponse({ type: AgentResponse })
  @ApiErrors({ 404: ['AGENT_NOT_FOUND'] })
  async get(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<AgentView> {
    return toAgentView(await this.agents.get(principal.tenantId, id));
  }

  @Get(':id/export')
  @ApiOperation({ summary: 'Export an agent definition as a hashed bundle that POST /v1/agents/import takes' })
  @ApiOkResponse({ type: AgentBundleResponse })
  @ApiErrors({ 404: ['AGENT_NOT_FOUND'] })
  export(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<AgentBundle> {
    return this.agents.export(principal.tenantId, id);
  }

  @Patch(':id')
  @ApiOperation({ summary: 'Change an agent definition: fields left out keep their value, pythonModules replaces the list' })
  @ApiOkResponse({ type: AgentResponse })
  @ApiErrors({ ...MODULE_ERRORS, 404: ['AGENT_NOT_FOUND'] })
  async update(@Principal() principal: TenantPrincipal, @Param('id') id: string, @Body() dto: UpdateAgentDto): Promise<AgentView> {
    // Absent: the policy stays; false or null: none.
    const network = dto.network === undefined ? undefined : networkOption(dto.network);
    return toAgentView(await this.agents.update(principal.tenantId, id, { ...dto, network }));
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete an agent definition' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors({ 404: ['AGENT_NOT_FOUND'] })
  async delete(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<void> {
    await this.agents.delete(principal.tenantId, id);
  }
}
