import { Body, Controller, Delete, Get, HttpCode, Param, ParseIntPipe, Patch, Post, Query, Req, Res } from '@nestjs/common';
import { ApiAcceptedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiProduces, ApiQuery } from '@nestjs/swagger';
import type { FastifyReply, FastifyRequest } from 'fastify';
import type { TenantPrincipal } from '@drydock/core';
import { TemplatesService, type TemplateOwner } from '@drydock/templates';
import { Principal } from '../auth/principal.decorator.js';
import { SseWriter } from '../executions/sse-writer.js';
import { ErrorResponseFilter } from '../http/error-response.filter.js';
import { AdminRoutes, TenantRoutes } from '../openapi/api-auth.js';
import { ApiErrors, VALIDATION_ERRORS } from '../openapi/api-errors.js';
import {
  CreateTemplateDto,
  TemplateBuildResponse,
  TemplateListResponse,
  TemplateResponse,
  UpdateTemplateDto,
} from './dto/templates.dto.js';

const LOGS_BODY =
  'Server-sent events: `log` (data: `{line}`) for each line of the build, from its first, as the worker produces them; ' +
  'then `done` (data: `{status, error}`) when the version is ready or failed, and the stream ends.';

const CREATE_ERRORS = {
  400: [...VALIDATION_ERRORS[400]!, 'INVALID_DOCKERFILE', 'INVALID_TEMPLATE_CONTEXT', 'INVALID_TEMPLATE'],
  413: [...VALIDATION_ERRORS[413]!, 'TEMPLATE_CONTEXT_TOO_LARGE'],
  503: ['TEMPLATES_UNAVAILABLE'],
};

// Follows a version's build log as server-sent events (both controllers).
async function streamLogs(
  templates: TemplatesService,
  viewer: TemplateOwner,
  name: string,
  version: number,
  req: FastifyRequest,
  reply: FastifyReply,
): Promise<void> {
  const abort = new AbortController();
  req.raw.on('close', () => abort.abort());
  const events = await templates.follow(viewer, name, version, abort.signal);
  const sse = new SseWriter(reply);
  // The headers now: a build waiting for a worker may not log for minutes, and clients
  // give up on a response without headers (Node's fetch after 5 minutes).
  sse.open();
  try {
    for await (const { event, data } of events) sse.send(event, data);
  } catch (error) {
    if (!sse.started) throw error;
    sse.send('error', new ErrorResponseFilter().toResponse(error).body.error);
  }
  sse.end();
}

// Templates (API.md "Templates", docs/templates.md): a tenant's own sandbox images and
// the shared ones. Another tenant's template is a 404 on every route.
@Controller('v1/templates')
@TenantRoutes('templates')
export class TemplatesController {
  constructor(private readonly templates: TemplatesService) {}

  @Post()
  @HttpCode(202)
  @ApiOperation({ summary: 'Build a template (a new version of it) from a Dockerfile starting FROM drydock' })
  @ApiAcceptedResponse({ type: TemplateBuildResponse, description: 'Queued; follow GET .../versions/:version/logs.' })
  @ApiErrors(CREATE_ERRORS)
  create(@Principal() principal: TenantPrincipal, @Body() dto: CreateTemplateDto): Promise<TemplateBuildResponse> {
    return this.templates.create({ tenantId: principal.tenantId }, dto);
  }

  @Get()
  @ApiOperation({ summary: 'Your templates and the shared ones, each with its newest version' })
  @ApiOkResponse({ type: TemplateListResponse })
  async list(@Principal() principal: TenantPrincipal): Promise<TemplateListResponse> {
    return { templates: await this.templates.list(principal.tenantId) };
  }

  @Get(':name')
  @ApiOperation({ summary: 'A template and all its versions' })
  @ApiOkResponse({ type: TemplateResponse })
  @ApiErrors({ 404: ['TEMPLATE_NOT_FOUND'] })
  get(@Principal() principal: TenantPrincipal, @Param('name') name: string): Promise<TemplateResponse> {
    return this.templates.get({ tenantId: principal.tenantId }, name);
  }

  @Get(':name/versions/:version/logs')
  @ApiOperation({ summary: "Follow a version's build log as server-sent events until it is ready or failed" })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ description: 'An event stream: log…, done.', schema: { type: 'string', description: LOGS_BODY }, example: 'event: log\ndata: {"line":"Step 1/2 : FROM drydock"}\n\nevent: done\ndata: {"status":"ready","error":null}\n\n' })
  @ApiErrors({ 400: ['VALIDATION_FAILED'], 404: ['TEMPLATE_NOT_FOUND'] })
  async logs(
    @Principal() principal: TenantPrincipal,
    @Param('name') name: string,
    @Param('version', ParseIntPipe) version: number,
    @Req() req: FastifyRequest,
    @Res() reply: FastifyReply,
  ): Promise<void> {
    await streamLogs(this.templates, { tenantId: principal.tenantId }, name, version, req, reply);
  }

  @Delete(':name')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a template: no new session starts from it; its images go once no session uses them' })
  @ApiNoContentResponse()
  @ApiErrors({ 403: ['TEMPLATE_SHARED'], 404: ['TEMPLATE_NOT_FOUND'] })
  async delete(@Principal() principal: TenantPrincipal, @Param('name') name: string): Promise<void> {
    await this.templates.delete({ tenantId: principal.tenantId }, name);
  }
}

// Shared templates: built like a tenant's, visible to every tenant, and their warm pools.
@Controller('admin/templates')
@AdminRoutes('admin')
export class AdminTemplatesController {
  constructor(private readonly templates: TemplatesService) {}

  @Post()
  @HttpCode(202)
  @ApiOperation({ summary: 'Build a shared template (a new version of it), visible to every tenant' })
  @ApiAcceptedResponse({ type: TemplateBuildResponse })
  @ApiErrors(CREATE_ERRORS)
  create(@Body() dto: CreateTemplateDto): Promise<TemplateBuildResponse> {
    return this.templates.create('shared', dto);
  }

  @Get()
  @ApiOperation({ summary: 'The shared templates' })
  @ApiOkResponse({ type: TemplateListResponse })
  async list(): Promise<TemplateListResponse> {
    return { templates: await this.templates.listShared() };
  }

  @Get(':name')
  @ApiOperation({ summary: 'A shared template and its versions' })
  @ApiOkResponse({ type: TemplateResponse })
  @ApiErrors({ 404: ['TEMPLATE_NOT_FOUND'] })
  get(@Param('name') name: string): Promise<TemplateResponse> {
    return this.templates.get('shared', name);
  }

  @Get(':name/versions/:version/logs')
  @ApiOperation({ summary: "Follow a shared template version's build log" })
  @ApiProduces('text/event-stream')
  @ApiOkResponse({ description: 'An event stream: log…, done.', schema: { type: 'string', description: LOGS_BODY } })
  @ApiErrors({ 400: ['VALIDATION_FAILED'], 404: ['TEMPLATE_NOT_FOUND'] })
  async logs(@Param('name') name: string, @Param('version', ParseIntPipe) version: number, @Req() req: FastifyRequest, @Res() reply: FastifyReply): Promise<void> {
    await streamLogs(this.templates, 'shared', name, version, req, reply);
  }

  @Patch(':name')
  @ApiOperation({ summary: "Set the warm pool size of a shared template (or, with tenantId, of a tenant's)" })
  @ApiQuery({ name: 'tenantId', required: false, description: "A tenant's template of that name instead of the shared one." })
  @ApiOkResponse({ type: TemplateResponse })
  @ApiErrors({ ...VALIDATION_ERRORS, 404: ['TEMPLATE_NOT_FOUND'] })
  update(@Param('name') name: string, @Body() dto: UpdateTemplateDto, @Query('tenantId') tenantId?: string): Promise<TemplateResponse> {
    return this.templates.setPoolSize(name, dto.poolSize, tenantId || undefined);
  }

  @Delete(':name')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a shared template' })
  @ApiNoContentResponse()
  @ApiErrors({ 404: ['TEMPLATE_NOT_FOUND'] })
  async delete(@Param('name') name: string): Promise<void> {
    await this.templates.delete('shared', name);
  }
}
