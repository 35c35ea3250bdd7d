import { Controller, Delete, Get, HttpCode, Inject, Param, Post, UseGuards } from '@nestjs/common';
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
import { AdminAuthGuard } from '../auth/admin-auth.guard.js';
import { BullMqJobDispatcher } from '../queue/bullmq-job-dispatcher.js';

@Controller('admin')
@UseGuards(AdminAuthGuard)
export class AdminOperationsController {
  constructor(
    @Inject(WORKER_REGISTRY) private readonly workers: WorkerRegistry,
    @Inject(SESSIONS_REPOSITORY) private readonly sessionsRepo: SessionsRepository,
    private readonly sessions: SessionsService,
    private readonly dispatcher: BullMqJobDispatcher,
  ) {}

  @Get('workers')
  async listWorkers() {
    return { workers: await this.workers.listLive() };
  }

  // Asks a worker to drain: it stops taking sessions and batch items, lets running work
  // finish, hands its sessions back and removes its containers (docs/operations.md).
  @Post('workers/:id/drain')
  @HttpCode(202)
  async drainWorker(@Param('id') id: string) {
    const worker = (await this.workers.listLive()).find((w) => w.id === id);
    if (!worker) throw new NotFoundError('WORKER_NOT_FOUND', `No live worker with id ${id}.`);
    await this.workers.requestDrain(id);
    return { ...worker, drainRequested: true };
  }

  @Get('queues')
  async listQueues() {
    const workers = await this.workers.listLive();
    return { queues: await this.dispatcher.queueCounts(workers.map((w) => w.id)) };
  }

  @Get('sessions')
  async listSessions() {
    const sessions = await this.sessionsRepo.listAllLive(1000);
    return {
      sessions: sessions.map((s) => ({ ...toSessionView(s, this.sessions.idleMs), tenantId: s.tenantId, containerId: s.containerId })),
    };
  }

  @Delete('sessions/:id')
  @HttpCode(204)
  async deleteSession(@Param('id') id: string) {
    const session = await this.sessionsRepo.findAnyById(id);
    if (!session) throw SessionsError.notFound(id);
    await this.sessions.delete(session.tenantId, id);
  }
}
