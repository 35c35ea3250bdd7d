import { Body, Controller, Delete, Get, Header, HttpCode, Param, Patch, Post } from '@nestjs/common';
import { ApiNoContentResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import type { TenantPrincipal } from '@drydock/core';
import { Principal } from '../auth/principal.decorator.js';
import { LangGraphRoutes } from '../openapi/api-auth.js';
import { ApiErrors, VALIDATION_ERRORS } from '../openapi/api-errors.js';
import { ThreadResponse, ThreadStateResponse, UpdateThreadStateResponse } from './dto/langgraph.response.js';
import { StateAtCheckpointDto, ThreadHistoryDto, UpdateThreadStateDto } from './dto/thread-state.dto.js';
import { CountThreadsDto, CreateThreadDto, PatchThreadDto, SearchThreadsDto } from './dto/threads.dto.js';
import { LangGraphThreadsService } from './langgraph-threads.service.js';
import type { ThreadView } from './langgraph.views.js';
import { LangGraphThreadIdPipe } from './thread-id.pipe.js';
import type { WireCheckpoint, WireThreadState } from './thread-state.mapper.js';

// LangGraph Platform API: threads and their state. Thread ids are UUIDs; another
// tenant's thread is 404 THREAD_NOT_FOUND on every route.
@Controller('threads')
@LangGraphRoutes('langgraph')
export class ThreadsController {
  constructor(private readonly threads: LangGraphThreadsService) {}

  @Post()
  @HttpCode(200)
  @ApiOperation({ summary: 'Create a thread (or, with if_exists "do_nothing", get back the existing one)' })
  @ApiOkResponse({ type: ThreadResponse })
  @ApiErrors({
    ...VALIDATION_ERRORS,
    400: [...VALIDATION_ERRORS[400]!, 'INVALID_THREAD_ID', 'UNSUPPORTED_OPTION'],
    409: ['THREAD_EXISTS'],
  })
  create(@Principal() principal: TenantPrincipal, @Body() dto: CreateThreadDto): Promise<ThreadView> {
    return this.threads.create(principal.tenantId, dto);
  }

  @Post('search')
  @HttpCode(200)
  @ApiOperation({ summary: "Search the tenant's threads by metadata, ids or status (newest first by default)" })
  @ApiOkResponse({ type: [ThreadResponse], description: 'The threads; with `select`, only the fields asked for.' })
  @ApiErrors({ ...VALIDATION_ERRORS, 400: [...VALIDATION_ERRORS[400]!, 'UNSUPPORTED_OPTION'] })
  search(@Principal() principal: TenantPrincipal, @Body() dto: SearchThreadsDto): Promise<Partial<ThreadView>[]> {
    return this.threads.search(principal.tenantId, dto);
  }

  @Post('count')
  @HttpCode(200)
  @Header('Content-Type', 'application/json; charset=utf-8')
  @ApiOperation({ summary: "Count the tenant's threads matching metadata and status" })
  @ApiOkResponse({ description: 'The number of matching threads.', schema: { type: 'integer', minimum: 0, example: 3 } })
  @ApiErrors({ ...VALIDATION_ERRORS, 400: [...VALIDATION_ERRORS[400]!, 'UNSUPPORTED_OPTION'] })
  count(@Principal() principal: TenantPrincipal, @Body() dto: CountThreadsDto): Promise<number> {
    return this.threads.count(principal.tenantId, dto);
  }

  @Get(':thread_id')
  @ApiOperation({ summary: 'One thread, with its current state values' })
  @ApiOkResponse({ type: ThreadResponse })
  @ApiErrors({ 400: ['INVALID_THREAD_ID'], 404: ['THREAD_NOT_FOUND'] })
  get(@Principal() principal: TenantPrincipal, @Param('thread_id', LangGraphThreadIdPipe) threadId: string): Promise<ThreadView> {
    return this.threads.get(principal.tenantId, threadId);
  }

  @Patch(':thread_id')
  @ApiOperation({ summary: "Merge keys into a thread's metadata" })
  @ApiOkResponse({ type: ThreadResponse })
  @ApiErrors({
    ...VALIDATION_ERRORS,
    400: [...VALIDATION_ERRORS[400]!, 'INVALID_THREAD_ID', 'UNSUPPORTED_OPTION'],
    404: ['THREAD_NOT_FOUND'],
  })
  patch(
    @Principal() principal: TenantPrincipal,
    @Param('thread_id', LangGraphThreadIdPipe) threadId: string,
    @Body() dto: PatchThreadDto,
  ): Promise<ThreadView> {
    return this.threads.patch(principal.tenantId, threadId, dto);
  }

  @Delete(':thread_id')
  @HttpCode(204)
  @ApiOperation({ summary: 'Delete a thread and its checkpoints (its files and sessions stay)' })
  @ApiNoContentResponse({ description: 'Deleted.' })
  @ApiErrors({ 400: ['INVALID_THREAD_ID'], 404: ['THREAD_NOT_FOUND'], 409: ['THREAD_BUSY'], 503: ['AGENT_UNAVAILABLE'] })
  async delete(@Principal() principal: TenantPrincipal, @Param('thread_id', LangGraphThreadIdPipe) threadId: string): Promise<void> {
    await this.threads.delete(principal.tenantId, threadId);
  }

  @Get(':thread_id/state')
  @ApiOperation({ summary: "A thread's current state" })
  @ApiOkResponse({ type: ThreadStateResponse })
  @ApiErrors({ 400: ['INVALID_THREAD_ID'], 404: ['THREAD_NOT_FOUND'], 503: ['AGENT_UNAVAILABLE'] })
  getState(
    @Principal() principal: TenantPrincipal,
    @Param('thread_id', LangGraphThreadIdPipe) threadId: string,
  ): Promise<WireThreadState> {
    return this.threads.getState(principal.tenantId, threadId);
  }

  @Post(':thread_id/state')
  @HttpCode(200)
  @ApiOperation({ summary: "Update a thread's state as if a node (as_node) had returned the values" })
  @ApiOkResponse({ type: UpdateThreadStateResponse })
  @ApiErrors({
    ...VALIDATION_ERRORS,
    400: [...VALIDATION_ERRORS[400]!, 'INVALID_THREAD_ID', 'INVALID_CHECKPOINT_ID', 'INVALID_STATE_UPDATE'],
    404: ['THREAD_NOT_FOUND'],
    409: ['THREAD_BUSY'],
    503: ['AGENT_UNAVAILABLE'],
  })
  updateState(
    @Principal() principal: TenantPrincipal,
    @Param('thread_id', LangGraphThreadIdPipe) threadId: string,
    @Body() dto: UpdateThreadStateDto,
  ): Promise<{ checkpoint: WireCheckpoint | null }> {
    return this.threads.updateState(principal.tenantId, threadId, dto);
  }

  @Post(':thread_id/state/checkpoint')
  @HttpCode(200)
  @ApiOperation({ summary: "A thread's state at the checkpoint given in the body" })
  @ApiOkResponse({ type: ThreadStateResponse })
  @ApiErrors({
    ...VALIDATION_ERRORS,
    400: [...VALIDATION_ERRORS[400]!, 'INVALID_THREAD_ID', 'INVALID_CHECKPOINT_ID', 'UNSUPPORTED_OPTION'],
    404: ['THREAD_NOT_FOUND', 'CHECKPOINT_NOT_FOUND'],
    503: ['AGENT_UNAVAILABLE'],
  })
  getStateAt(
    @Principal() principal: TenantPrincipal,
    @Param('thread_id', LangGraphThreadIdPipe) threadId: string,
    @Body() dto: StateAtCheckpointDto,
  ): Promise<WireThreadState> {
    return this.threads.getStateAt(principal.tenantId, threadId, dto);
  }

  @Get(':thread_id/state/:checkpoint_id')
  @ApiOperation({ summary: "A thread's state at one checkpoint" })
  @ApiOkResponse({ type: ThreadStateResponse })
  @ApiErrors({
    400: ['INVALID_THREAD_ID', 'INVALID_CHECKPOINT_ID'],
    404: ['THREAD_NOT_FOUND', 'CHECKPOINT_NOT_FOUND'],
    503: ['AGENT_UNAVAILABLE'],
  })
  getStateAtId(
    @Principal() principal: TenantPrincipal,
    @Param('thread_id', LangGraphThreadIdPipe) threadId: string,
    @Param('checkpoint_id') checkpointId: string,
  ): Promise<WireThreadState> {
    return this.threads.getState(principal.tenantId, threadId, checkpointId);
  }

  @Post(':thread_id/history')
  @HttpCode(200)
  @ApiOperation({ summary: "A thread's past states, newest first" })
  @ApiOkResponse({ type: [ThreadStateResponse] })
  @ApiErrors({
    ...VALIDATION_ERRORS,
    400: [...VALIDATION_ERRORS[400]!, 'INVALID_THREAD_ID', 'INVALID_CHECKPOINT_ID', 'UNSUPPORTED_OPTION'],
    404: ['THREAD_NOT_FOUND'],
    503: ['AGENT_UNAVAILABLE'],
  })
  history(
    @Principal() principal: TenantPrincipal,
    @Param('thread_id', LangGraphThreadIdPipe) threadId: string,
    @Body() dto: ThreadHistoryDto,
  ): Promise<WireThreadState[]> {
    return this.threads.history(principal.tenantId, threadId, dto);
  }
}
