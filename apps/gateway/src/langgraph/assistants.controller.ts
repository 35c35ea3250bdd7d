import { Body, Controller, Get, Header, HttpCode, Param, Post, Res } from '@nestjs/common';
import { ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { TenantPrincipal } from '@drydock/core';
import { Principal } from '../auth/principal.decorator.js';
import { LangGraphRoutes } from '../openapi/api-auth.js';
import { ApiErrors, VALIDATION_ERRORS } from '../openapi/api-errors.js';
import { CountAssistantsDto, SearchAssistantsDto } from './dto/assistants.dto.js';
import { AssistantResponse } from './dto/langgraph.response.js';
import { LangGraphAssistantsService } from './langgraph-assistants.service.js';
import { type AssistantView, selectFields } from './langgraph.views.js';

// LangGraph Platform API: assistants (read-only; they are the tenant's agents).
@Controller('assistants')
@LangGraphRoutes('langgraph')
export class AssistantsController {
  constructor(private readonly assistants: LangGraphAssistantsService) {}

  @Post('search')
  @HttpCode(200)
  @ApiOperation({ summary: "Search the tenant's assistants: the built-in agent and its agent definitions" })
  @ApiOkResponse({
    type: [AssistantResponse],
    description: 'The assistants; with `select`, only the fields asked for.',
    headers: { 'X-Pagination-Next': { description: 'The offset of the next page, when there are more.', schema: { type: 'integer' } } },
  })
  @ApiErrors({ ...VALIDATION_ERRORS, 503: ['AGENT_UNAVAILABLE'] })
  async search(
    @Principal() principal: TenantPrincipal,
    @Body() dto: SearchAssistantsDto,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<Partial<AssistantView>[]> {
    const { assistants, next } = await this.assistants.search(principal.tenantId, dto);
    if (next !== null) res.header('X-Pagination-Next', String(next));
    return assistants.map((view) => selectFields(view, dto.select));
  }

  @Post('count')
  @HttpCode(200)
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOperation({ summary: "Count the tenant's assistants matching the filters" })
  @ApiOkResponse({ description: 'The number of matching assistants.', schema: { type: 'integer', minimum: 0, example: 2 } })
  @ApiErrors({ ...VALIDATION_ERRORS, 503: ['AGENT_UNAVAILABLE'] })
  count(@Principal() principal: TenantPrincipal, @Body() dto: CountAssistantsDto): Promise<number> {
    return this.assistants.count(principal.tenantId, dto);
  }

  @Get(':assistant_id')
  @ApiOperation({ summary: 'One assistant: "agent" or one of the tenant\'s agent definitions' })
  @ApiOkResponse({ type: AssistantResponse })
  @ApiErrors({ 404: ['AGENT_NOT_FOUND'], 503: ['AGENT_UNAVAILABLE'] })
  get(@Principal() principal: TenantPrincipal, @Param('assistant_id') assistantId: string): Promise<AssistantView> {
    return this.assistants.get(principal.tenantId, assistantId);
  }
}
