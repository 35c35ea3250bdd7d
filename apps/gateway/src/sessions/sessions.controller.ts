import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { DrydockError, type TenantPrincipal } from '@drydock/core';
import { DatasetRegistry, SessionsService, toSessionView, type DatasetEntry, type SessionView, type StagedDataset } from '@drydock/sessions';
import { Principal } from '../auth/principal.decorator.js';
import { TenantAuthGuard } from '../auth/tenant-auth.guard.js';
import { CreateSessionDto, StageDatasetDto } from './dto/create-session.dto.js';

@Controller('v1/sessions')
@UseGuards(TenantAuthGuard)
export class SessionsController {
  constructor(private readonly sessions: SessionsService) {}

  @Post()
  async create(
    @Principal() principal: TenantPrincipal,
    @Body() dto: CreateSessionDto,
    @Res({ passthrough: true }) res: Response,
  ): Promise<SessionView> {
    if (dto.network === true) {
      throw new DrydockError('NETWORK_FORBIDDEN', 'Sandboxes have no network access; omit "network" or set it to false.', 403);
    }
    const { session, created } = await this.sessions.create(principal.tenantId, {
      threadId: dto.threadId,
      limits: dto.limits,
      storage: dto.storage,
      datasets: dto.datasets,
    });
    res.status(created ? 201 : 200);
    return toSessionView(session, this.sessions.idleMs);
  }

  @Get()
  async list(
    @Principal() principal: TenantPrincipal,
    @Query('includeEnded') includeEnded?: string,
  ): Promise<{ sessions: SessionView[] }> {
    const sessions = await this.sessions.list(principal.tenantId, includeEnded === 'true');
    return { sessions: sessions.map((s) => toSessionView(s, this.sessions.idleMs)) };
  }

  @Get(':id')
  async get(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<SessionView> {
    return toSessionView(await this.sessions.get(principal.tenantId, id), this.sessions.idleMs);
  }

  // Stages a dataset into the running session's /session/data/<name>.
  @Post(':id/datasets')
  @HttpCode(200)
  stageDataset(
    @Principal() principal: TenantPrincipal,
    @Param('id') id: string,
    @Body() dto: StageDatasetDto,
  ): Promise<StagedDataset> {
    return this.sessions.stageDataset(principal.tenantId, id, dto.name);
  }

  @Delete(':id')
  @HttpCode(204)
  async delete(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<void> {
    await this.sessions.delete(principal.tenantId, id);
  }
}

// The datasets a tenant may name when it creates a session.
@Controller('v1/datasets')
@UseGuards(TenantAuthGuard)
export class DatasetsController {
  constructor(private readonly datasets: DatasetRegistry) {}

  @Get()
  async list(@Principal() principal: TenantPrincipal): Promise<{ datasets: DatasetEntry[] }> {
    return { datasets: await this.datasets.list(principal.tenantId) };
  }
}
