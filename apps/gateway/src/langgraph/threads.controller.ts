import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post, UseGuards } from '@nestjs/common';
import type { TenantPrincipal } from '@drydock/core';
import { ApiKeyAuthGuard } from '../auth/api-key-auth.guard.js';
import { Principal } from '../auth/principal.decorator.js';
import { StateAtCheckpointDto, ThreadHistoryDto, UpdateThreadStateDto } from './dto/thread-state.dto.js';
import { CountThreadsDto, CreateThreadDto, PatchThreadDto, SearchThreadsDto } from './dto/threads.dto.js';
import { LangGraphThreadsService } from './langgraph-threads.service.js';
import type { ThreadView } from './langgraph.views.js';
import { LangGraphThreadIdPipe } from './thread-id.pipe.js';
import type { WireCheckpoint, WireThreadState } from './thread-state.mapper.js';

// LangGraph Platform API: threads and their state. Thread ids are UUIDs; another
// tenant's thread is 404 THREAD_NOT_FOUND on every route.
@Controller('threads')
@UseGuards(ApiKeyAuthGuard)
export class ThreadsController {
  constructor(private readonly threads: LangGraphThreadsService) {}

  @Post()
  @HttpCode(200)
  create(@Principal() principal: TenantPrincipal, @Body() dto: CreateThreadDto): Promise<ThreadView> {
    return this.threads.create(principal.tenantId, dto);
  }

  @Post('search')
  @HttpCode(200)
  search(@Principal() principal: TenantPrincipal, @Body() dto: SearchThreadsDto): Promise<Partial<ThreadView>[]> {
    return this.threads.search(principal.tenantId, dto);
  }

  @Post('count')
  @HttpCode(200)
  @Header('Content-Type', 'application/json; charset=utf-8')
  count(@Principal() principal: TenantPrincipal, @Body() dto: CountThreadsDto): Promise<number> {
    return this.threads.count(principal.tenantId, dto);
  }

  @Get(':thread_id')
  get(@Principal() principal: TenantPrincipal, @Param('thread_id', LangGraphThreadIdPipe) threadId: string): Promise<ThreadView> {
    return this.threads.get(principal.tenantId, threadId);
  }

  @Patch(':thread_id')
  patch(
    @Principal() principal: TenantPrincipal,
    @Param('thread_id', LangGraphThreadIdPipe) threadId: string,
    @Body() dto: PatchThreadDto,
  ): Promise<ThreadView> {
    return this.threads.patch(principal.tenantId, threadId, dto);
  }

  @Delete(':thread_id')
  @HttpCode(204)
  async delete(@Principal() principal: TenantPrincipal, @Param('thread_id', LangGraphThreadIdPipe) threadId: string): Promise<void> {
    await this.threads.delete(principal.tenantId, threadId);
  }

  @Get(':thread_id/state')
  getState(
    @Principal() principal: TenantPrincipal,
    @Param('thread_id', LangGraphThreadIdPipe) threadId: string,
  ): Promise<WireThreadState> {
    return this.threads.getState(principal.tenantId, threadId);
  }

  @Post(':thread_id/state')
  @HttpCode(200)
  updateState(
    @Principal() principal: TenantPrincipal,
    @Param('thread_id', LangGraphThreadIdPipe) threadId: string,
    @Body() dto: UpdateThreadStateDto,
  ): Promise<{ checkpoint: WireCheckpoint | null }> {
    return this.threads.updateState(principal.tenantId, threadId, dto);
  }

  @Post(':thread_id/state/checkpoint')
  @HttpCode(200)
  getStateAt(
    @Principal() principal: TenantPrincipal,
    @Param('thread_id', LangGraphThreadIdPipe) threadId: string,
    @Body() dto: StateAtCheckpointDto,
  ): Promise<WireThreadState> {
    return this.threads.getStateAt(principal.tenantId, threadId, dto);
  }

  @Get(':thread_id/state/:checkpoint_id')
  getStateAtId(
    @Principal() principal: TenantPrincipal,
    @Param('thread_id', LangGraphThreadIdPipe) threadId: string,
    @Param('checkpoint_id') checkpointId: string,
  ): Promise<WireThreadState> {
    return this.threads.getState(principal.tenantId, threadId, checkpointId);
  }

  @Post(':thread_id/history')
  @HttpCode(200)
  history(
    @Principal() principal: TenantPrincipal,
    @Param('thread_id', LangGraphThreadIdPipe) threadId: string,
    @Body() dto: ThreadHistoryDto,
  ): Promise<WireThreadState[]> {
    return this.threads.history(principal.tenantId, threadId, dto);
  }
}
