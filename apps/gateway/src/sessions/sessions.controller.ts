import { Body, Controller, Delete, Get, HttpCode, Inject, Param, Patch, Post, Query, Res } from '@nestjs/common';
import { ApiCreatedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation, ApiQuery, ApiResponse } from '@nestjs/swagger';
import type { FastifyReply } from 'fastify';
import type { TenantPrincipal } from '@drydock/core';
import { EGRESS_LOG_REPOSITORY, type EgressLogRepository } from '@drydock/egress';
import { networkOption } from '../http/network-option.js';
import { EgressLogQueryDto, SessionNetworkResponse, toConnectionView, type SessionNetworkView } from '../egress/egress.views.js';
import { DatasetRegistry, SessionsService, toSessionView, type DatasetEntry, type SessionView, type StagedDataset } from '@drydock/sessions';
import { Principal } from '../auth/principal.decorator.js';
import { ApiErrors, VALIDATION_ERRORS } from '../openapi/api-errors.js';
import { TenantRoutes } from '../openapi/api-auth.js';
import { CreateSessionDto, NarrowNetworkDto, StageDatasetDto } from './dto/create-session.dto.js';
import { DatasetListResponse, SessionListResponse, SessionResponse, StagedDatasetResponse } from './dto/session.response.js';

@Controller('v1/sessions')
@TenantRoutes('sessions')
export class SessionsController {
  constructor(
    private readonly sessions: SessionsService,
    @Inject(EGRESS_LOG_REPOSITORY) private readonly egressLog: EgressLogRepository,
  ) {}

  @Post()
  @ApiOperation({ summary: 'Start a session (a sandbox with a Python REPL) for a thread, or return its live one' })
  @ApiCreatedResponse({ type: SessionResponse, description: 'A new session.' })
  @ApiOkResponse({ type: SessionResponse, description: 'The thread already had a live session.' })
  @ApiErrors({
    ...VALIDATION_ERRORS,
    400: [...VALIDATION_ERRORS[400]!, 'INVALID_DATASET_NAME', 'DUPLICATE_DATASET', 'INVALID_TEMPLATE', 'INVALID_NETWORK_POLICY', 'INVALID_FORK'],
    403: ['NETWORK_FORBIDDEN'],
    404: ['TEMPLATE_NOT_FOUND', 'SNAPSHOT_NOT_FOUND'],
    409: ['TEMPLATE_NOT_READY', 'THREAD_HAS_SESSION'],
    422: ['NETWORK_NOT_ALLOWED', 'STORAGE_NOT_AVAILABLE', 'DATASETS_NOT_CONFIGURED', 'DATASET_NOT_FOUND', 'DATASET_TOO_LARGE', 'TIER_NOT_AVAILABLE', 'TIER_NOT_ALLOWED'],
    429: ['SESSION_QUOTA_EXCEEDED'],
    503: ['NO_WORKER_AVAILABLE', 'SANDBOX_UNAVAILABLE'],
  })
  async create(
    @Principal() principal: TenantPrincipal,
    @Body() dto: CreateSessionDto,
    @Res({ passthrough: true }) res: FastifyReply,
  ): Promise<SessionView> {
    const network = networkOption(dto.network);
    const { session, created } = await this.sessions.create(principal.tenantId, {
      threadId: dto.threadId,
      limits: dto.limits,
      storage: dto.storage,
      datasets: dto.datasets,
      template: dto.template,
      ...(network ? { network } : {}),
      ...(dto.tier ? { tier: dto.tier } : {}),
      ...(dto.idleAction ? { idleAction: dto.idleAction } : {}),
      ...(dto.fromSnapshot !== undefined ? { fromSnapshot: dto.fromSnapshot } : {}),
    });
    res.status(created ? 201 : 200);
    return toSessionView(session, this.sessions.idleMs, this.sessions.hibernatedRetentionMs);
  }

  @Get()
  @ApiOperation({ summary: "The tenant's live sessions (and ended ones with includeEnded=true)" })
  @ApiQuery({ name: 'includeEnded', required: false, enum: ['true', 'false'] })
  @ApiOkResponse({ type: SessionListResponse })
  async list(
    @Principal() principal: TenantPrincipal,
    @Query('includeEnded') includeEnded?: string,
  ): Promise<{ sessions: SessionView[] }> {
    const sessions = await this.sessions.list(principal.tenantId, includeEnded === 'true');
    return { sessions: sessions.map((s) => toSessionView(s, this.sessions.idleMs, this.sessions.hibernatedRetentionMs)) };
  }

  @Get(':id')
  @ApiOperation({ summary: 'One session' })
  @ApiOkResponse({ type: SessionResponse })
  @ApiErrors({ 404: ['SESSION_NOT_FOUND'] })
  async get(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<SessionView> {
    return toSessionView(await this.sessions.get(principal.tenantId, id), this.sessions.idleMs, this.sessions.hibernatedRetentionMs);
  }

  @Get(':id/network')
  @ApiOperation({ summary: "A session's network policy and its connection log (newest first)" })
  @ApiQuery({ name: 'verdict', required: false, enum: ['allowed', 'denied'] })
  @ApiQuery({ name: 'limit', required: false, description: '1-1000, default 100.' })
  @ApiQuery({ name: 'before', required: false, description: 'The `next` of the page before.' })
  @ApiOkResponse({ type: SessionNetworkResponse })
  @ApiErrors({ ...VALIDATION_ERRORS, 404: ['SESSION_NOT_FOUND'] })
  async network(
    @Principal() principal: TenantPrincipal,
    @Param('id') id: string,
    @Query() query: EgressLogQueryDto,
  ): Promise<SessionNetworkView> {
    const session = await this.sessions.get(principal.tenantId, id);
    const limit = query.limit ?? 100;
    const rows = await this.egressLog.list({ tenantId: principal.tenantId, sessionId: session.id, verdict: query.verdict, before: query.before, limit });
    return {
      policy: session.network ?? null,
      connections: rows.map(toConnectionView),
      next: rows.length === limit ? rows[rows.length - 1]!.id : null,
    };
  }

  @Patch(':id/network')
  @ApiOperation({ summary: "Narrow a live session's network policy (its next connections are decided by it)" })
  @ApiOkResponse({ type: SessionResponse })
  @ApiErrors({ ...VALIDATION_ERRORS, 400: [...VALIDATION_ERRORS[400]!, 'INVALID_NETWORK_POLICY'], 404: ['SESSION_NOT_FOUND'], 409: ['SESSION_ENDED'], 422: ['NETWORK_NOT_ALLOWED'] })
  async narrowNetwork(@Principal() principal: TenantPrincipal, @Param('id') id: string, @Body() dto: NarrowNetworkDto): Promise<SessionView> {
    return toSessionView(await this.sessions.narrowNetwork(principal.tenantId, id, dto), this.sessions.idleMs, this.sessions.hibernatedRetentionMs);
  }

  // Stages a dataset into the running session's /session/data/<name>.
  @Post(':id/datasets')
  @HttpCode(200)
  @ApiOperation({ summary: "Copy a dataset into the running session's /session/data/<name>" })
  @ApiOkResponse({ type: StagedDatasetResponse })
  @ApiErrors({
    ...VALIDATION_ERRORS,
    404: ['SESSION_NOT_FOUND'],
    409: ['SESSION_ENDED', 'DATASET_MOUNTED'],
    422: ['DATASETS_NOT_CONFIGURED', 'DATASET_NOT_FOUND', 'DATASET_TOO_LARGE'],
    503: ['NO_WORKER_AVAILABLE', 'SESSION_MOVED'],
  })
  stageDataset(
    @Principal() principal: TenantPrincipal,
    @Param('id') id: string,
    @Body() dto: StageDatasetDto,
  ): Promise<StagedDataset> {
    return this.sessions.stageDataset(principal.tenantId, id, dto.name);
  }

  @Post(':id/hibernate')
  @HttpCode(202)
  @ApiOperation({
    summary: "Hibernate a session: its sandbox's memory, processes and files are checkpointed and its container removed",
    description: 'Its next execution, command or file operation resumes it, with its variables (stateLost false, resumedMs on that execution). A hibernated session is returned as it is.',
  })
  @ApiResponse({ status: 202, type: SessionResponse, description: 'Hibernated.' })
  @ApiErrors({ 404: ['SESSION_NOT_FOUND'], 409: ['SESSION_ENDED', 'SESSION_BUSY'], 422: ['CHECKPOINT_NOT_AVAILABLE'], 503: ['NO_WORKER_AVAILABLE', 'SESSION_MOVED'] })
  async hibernate(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<SessionView> {
    return toSessionView(await this.sessions.hibernate(principal.tenantId, id), this.sessions.idleMs, this.sessions.hibernatedRetentionMs);
  }

  @Delete(':id')
  @HttpCode(204)
  @ApiOperation({ summary: 'End a session: its container goes, its thread files stay' })
  @ApiNoContentResponse({ description: 'Ended.' })
  @ApiErrors({ 404: ['SESSION_NOT_FOUND'] })
  async delete(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<void> {
    await this.sessions.delete(principal.tenantId, id);
  }
}

// The datasets a tenant may name when it creates a session.
@Controller('v1/datasets')
@TenantRoutes('sessions')
export class DatasetsController {
  constructor(private readonly datasets: DatasetRegistry) {}

  @Get()
  @ApiOperation({ summary: 'The datasets this tenant may name when it creates a session' })
  @ApiOkResponse({ type: DatasetListResponse })
  @ApiErrors({ 422: ['DATASETS_NOT_CONFIGURED'] })
  async list(@Principal() principal: TenantPrincipal): Promise<{ datasets: DatasetEntry[] }> {
    return { datasets: await this.datasets.list(principal.tenantId) };
  }
}
