import { Controller, Delete, Get, HttpCode, Inject, Param, Post } from '@nestjs/common';
import { ApiAcceptedResponse, ApiNoContentResponse, ApiOkResponse, ApiOperation } from '@nestjs/swagger';
import { NotFoundError } from '@drydock/core';
import {
  SESSIONS_REPOSITORY,
  SessionsError,
  SessionsService,
  toSessionView,
  WORKER_REGISTRY,
  type SessionsRepository,
  type WorkerRegistry,
} from '@drydock/sessions';
import { ApiErrors } from '../openapi/api-errors.js';
import { AdminRoutes } from '../openapi/api-auth.js';
import { RedisJobDispatcher } from '../queue/redis-job-dispatcher.js';
import {
  AdminSessionListResponse,
  DrainingWorkerResponse,
  QueueListResponse,
  WorkerListResponse,
} from './dto/admin.response.js';

@Controller('admin')
@AdminRoutes('admin')
export class AdminOperationsController {
  constructor(
    @Inject(WORKER_REGISTRY) private readonly workers: WorkerRegistry,
    @Inject(SESSIONS_REPOSITORY) private readonly sessionsRepo: SessionsRepository,
    private readonly sessions: SessionsService,
    private readonly dispatcher: RedisJobDispatcher,
  ) {}

  @Get('workers')
  @ApiOperation({ summary: 'The live workers, their load, state and warm pool' })
  @ApiOkResponse({ type: WorkerListResponse })
  async listWorkers(): Promise<WorkerListResponse> {
    return { workers: await this.workers.listLive() };
  }

  // Asks a worker to drain: it stops taking sessions and batch items, lets running work
  // finish, hands its sessions back and removes its containers (docs/operations.md).
  @Post('workers/:id/drain')
  @HttpCode(202)
  @ApiOperation({ summary: 'Drain a worker: it takes no new work, finishes what runs and hands its sessions back' })
  @ApiAcceptedResponse({ type: DrainingWorkerResponse, description: 'The worker as it was, with drainRequested: true.' })
  @ApiErrors({ 404: ['WORKER_NOT_FOUND'] })
  async drainWorker(@Param('id') id: string): Promise<DrainingWorkerResponse> {
    const worker = (await this.workers.listLive()).find((w) => w.id === id);
    if (!worker) throw new NotFoundError('WORKER_NOT_FOUND', `No live worker with id ${id}.`);
    await this.workers.requestDrain(id);
    return { ...worker, drainRequested: true };
  }

  @Get('queues')
  @ApiOperation({ summary: "Job counts of each live worker's session queue" })
  @ApiOkResponse({ type: QueueListResponse })
  async listQueues(): Promise<QueueListResponse> {
    const workers = await this.workers.listLive();
    return { queues: await this.dispatcher.queueCounts(workers.map((w) => w.id)) };
  }

  @Get('sessions')
  @ApiOperation({ summary: "Every tenant's live sessions, with their tenant and Docker container" })
  @ApiOkResponse({ type: AdminSessionListResponse })
  async listSessions(): Promise<AdminSessionListResponse> {
    const sessions = await this.sessionsRepo.listAllLive(1000);
    return {
      sessions: sessions.map((s) => ({ ...toSessionView(s, this.sessions.idleMs), tenantId: s.tenantId, containerId: s.containerId })),
    };
  }

  @Delete('sessions/:id')
  @HttpCode(204)
  @ApiOperation({ summary: "End any tenant's session" })
  @ApiNoContentResponse({ description: 'Ended.' })
  @ApiErrors({ 404: ['SESSION_NOT_FOUND'] })
  async deleteSession(@Param('id') id: string): Promise<void> {
    const session = await this.sessionsRepo.findAnyById(id);
    if (!session) throw SessionsError.notFound(id);
    await this.sessions.delete(session.tenantId, id);
  }
}
