import { Body, Controller, Delete, Get, HttpCode, Param, Patch, Post, UseGuards } from '@nestjs/common';
import type { TenantPrincipal } from '@drydock/core';
import { AgentDefinitionsService, toAgentView, type AgentBundle, type AgentView } from '@drydock/agents';
import { Principal } from '../auth/principal.decorator.js';
import { TenantAuthGuard } from '../auth/tenant-auth.guard.js';
import { CreateAgentDto, UpdateAgentDto } from './dto/agent.dto.js';

// Agent definitions of the caller's tenant; another tenant's agent is AGENT_NOT_FOUND.
@Controller('v1/agents')
@UseGuards(TenantAuthGuard)
export class AgentsController {
  constructor(private readonly agents: AgentDefinitionsService) {}

  @Post()
  async create(@Principal() principal: TenantPrincipal, @Body() dto: CreateAgentDto): Promise<AgentView> {
    return toAgentView(await this.agents.create(principal.tenantId, dto));
  }

  @Get()
  async list(@Principal() principal: TenantPrincipal): Promise<{ agents: AgentView[] }> {
    return { agents: (await this.agents.list(principal.tenantId)).map(toAgentView) };
  }

  // The body is a bundle from GET /v1/agents/:id/export, checked by importAgentBundle.
  @Post('import')
  async import(@Principal() principal: TenantPrincipal, @Body() bundle: unknown): Promise<AgentView> {
    return toAgentView(await this.agents.import(principal.tenantId, bundle));
  }

  @Get(':id')
  async get(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<AgentView> {
    return toAgentView(await this.agents.get(principal.tenantId, id));
  }

  @Get(':id/export')
  export(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<AgentBundle> {
    return this.agents.export(principal.tenantId, id);
  }

  @Patch(':id')
  async update(@Principal() principal: TenantPrincipal, @Param('id') id: string, @Body() dto: UpdateAgentDto): Promise<AgentView> {
    return toAgentView(await this.agents.update(principal.tenantId, id, dto));
  }

  @Delete(':id')
  @HttpCode(204)
  async delete(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<void> {
    await this.agents.delete(principal.tenantId, id);
  }
}
