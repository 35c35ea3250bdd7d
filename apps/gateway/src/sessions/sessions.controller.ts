import { Body, Controller, Delete, Get, HttpCode, Param, Post, Query, Res, UseGuards } from '@nestjs/common';
import type { Response } from 'express';
import { DrydockError, type TenantPrincipal } from '@drydock/core';
import { SessionsService, toSessionView, type SessionView } from '@drydock/sessions';
import { Principal } from '../auth/principal.decorator.js';
import { TenantAuthGuard } from '../auth/tenant-auth.guard.js';
import { CreateSessionDto } from './dto/create-session.dto.js';

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
    if (dto.storage === 'bind') {
      throw new DrydockError('STORAGE_NOT_SUPPORTED', 'Session storage "bind" is not available yet; use "tmpfs".', 422);
    }
    if (dto.datasets?.length) {
      throw new DrydockError('DATASETS_NOT_SUPPORTED', 'Datasets are not available yet; omit "datasets".', 422);
    }
    const { session, created } = await this.sessions.create(principal.tenantId, {
      threadId: dto.threadId,
      limits: dto.limits,
      storage: dto.storage,
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

  @Delete(':id')
  @HttpCode(204)
  async delete(@Principal() principal: TenantPrincipal, @Param('id') id: string): Promise<void> {
    await this.sessions.delete(principal.tenantId, id);
  }
}
