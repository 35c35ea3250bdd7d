import { Body, Controller, Get, Header, HttpCode, Param, Post, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import type { TenantPrincipal } from '@drydock/core';
import { ApiKeyAuthGuard } from '../auth/api-key-auth.guard.js';
import { Principal } from '../auth/principal.decorator.js';
import { CountAssistantsDto, SearchAssistantsDto } from './dto/assistants.dto.js';
import { LangGraphAssistantsService } from './langgraph-assistants.service.js';
import { type AssistantView, selectFields } from './langgraph.views.js';

// LangGraph Platform API: assistants (read-only; they are the tenant's agents).
@Controller('assistants')
@UseGuards(ApiKeyAuthGuard)
export class AssistantsController {
  constructor(private readonly assistants: LangGraphAssistantsService) {}

  @Post('search')
  @HttpCode(200)
  async search(
    @Principal() principal: TenantPrincipal,
    @Body() dto: SearchAssistantsDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<Partial<AssistantView>[]> {
    const { assistants, next } = await this.assistants.search(principal.tenantId, dto);
    if (next !== null) res.setHeader('X-Pagination-Next', String(next));
    return assistants.map((view) => selectFields(view, dto.select));
  }

  @Post('count')
  @HttpCode(200)
  @Header('Content-Type', 'application/json; charset=utf-8')
  count(@Principal() principal: TenantPrincipal, @Body() dto: CountAssistantsDto): Promise<number> {
    return this.assistants.count(principal.tenantId, dto);
  }

  @Get(':assistant_id')
  get(@Principal() principal: TenantPrincipal, @Param('assistant_id') assistantId: string): Promise<AssistantView> {
    return this.assistants.get(principal.tenantId, assistantId);
  }
}
