import { createHash, timingSafeEqual } from 'node:crypto';
import { Inject, Injectable, Logger, type OnApplicationShutdown } from '@nestjs/common';
import type { NestFastifyApplication } from '@nestjs/platform-fastify';
import type { FastifyInstance, FastifyReply, FastifyRequest } from 'fastify';
import { Queue } from 'bullmq';
import { createBullBoard } from '@bull-board/api';
import { BullMQAdapter } from '@bull-board/api/bullMQAdapter';
import { FastifyAdapter } from '@bull-board/fastify';
import { APP_CONFIG, redisOptions, type AppConfig, repeatedErrorLogger } from '@drydock/core';
import { BATCH_QUEUE, MAINTENANCE_QUEUE, workerQueueName } from '@drydock/execution';
import { WORKER_REGISTRY, type WorkerRegistry } from '@drydock/sessions';

export const QUEUE_DASHBOARD_PATH = '/admin/queues/ui';
// How long the list of live workers' queues is reused between page loads.
const REFRESH_MS = 5_000;

const digest = (value: string) => createHash('sha256').update(value, 'utf8').digest();

// Bull Board over the platform's queues (batch items, maintenance, and each live
// worker's session queue), at /admin/queues/ui, for operators only: the admin key as a
// bearer token, or as the password of HTTP Basic auth (any user name), which a browser
// asks for.
@Injectable()
export class QueueDashboard implements OnApplicationShutdown {
  private readonly logger = new Logger(QueueDashboard.name);
  private readonly queues = new Map<string, Queue>();
  private readonly expected: Buffer;
  private refreshedAt = 0;
  private refreshing: Promise<void> | null = null;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(WORKER_REGISTRY) private readonly workers: WorkerRegistry,
  ) {
    this.expected = digest(config.adminKey);
  }

  // Registered as a Fastify plugin of its own, so that its hooks (the admin key, the list
  // of queues) and Bull Board's view engine and error handler stay inside it.
  async mount(app: NestFastifyApplication): Promise<void> {
    const serverAdapter = new FastifyAdapter();
    serverAdapter.setBasePath(QUEUE_DASHBOARD_PATH);
    const board = createBullBoard({ queues: [], serverAdapter, options: { uiConfig: { boardTitle: 'Drydock queues' } } });
    const refresh = () => {
      if (Date.now() - this.refreshedAt < REFRESH_MS) return Promise.resolve();
      this.refreshing ??= this.queueNames()
        .then((names) => {
          board.replaceQueues(names.map((name) => new BullMQAdapter(this.queue(name))));
          this.refreshedAt = Date.now();
        })
        .finally(() => {
          this.refreshing = null;
        });
      return this.refreshing;
    };
    await app.register(async (scope: FastifyInstance) => {
      scope.addHook('onRequest', async (req: FastifyRequest, reply: FastifyReply) => {
        // A hook that has answered returns the reply (Fastify's rule for async hooks).
        if (!this.authorize(req, reply)) return reply;
        await refresh();
      });
      await scope.register(serverAdapter.registerPlugin(), { prefix: QUEUE_DASHBOARD_PATH });
    });
  }

  async onApplicationShutdown(): Promise<void> {
    await Promise.allSettled([...this.queues.values()].map((q) => q.close()));
    this.queues.clear();
  }

  // True for the admin key; otherwise the 401 is sent.
  private authorize(req: FastifyRequest, reply: FastifyReply): boolean {
    const header = req.headers.authorization ?? '';
    let key: string | null = null;
    if (header.startsWith('Bearer ')) key = header.slice(7).trim();
    else if (header.startsWith('Basic ')) {
      const decoded = Buffer.from(header.slice(6).trim(), 'base64').toString('utf8');
      key = decoded.slice(decoded.indexOf(':') + 1);
    }
    if (key && timingSafeEqual(digest(key), this.expected)) return true;
    void reply.header('WWW-Authenticate', 'Basic realm="Drydock admin", charset="UTF-8"').status(401).send({
      error: key
        ? { code: 'INVALID_ADMIN_KEY', message: 'The admin key is not valid.' }
        : { code: 'UNAUTHORIZED', message: 'Send the admin key as a bearer token, or as the password of Basic auth.' },
    });
    return false;
  }

  private async queueNames(): Promise<string[]> {
    const live = await this.workers.listLive().catch((error: Error) => {
      this.logger.warn(`listing workers for the queue dashboard failed: ${error.message}`);
      return [];
    });
    return [BATCH_QUEUE, MAINTENANCE_QUEUE, ...live.map((w) => workerQueueName(w.id)).sort()];
  }

  private queue(name: string): Queue {
    let queue = this.queues.get(name);
    if (!queue) {
      queue = new Queue(name, { connection: redisOptions(this.config.redisUrl, 'drydock-queue-dashboard') });
      queue.on('error', repeatedErrorLogger(this.logger, `queue ${name}`));
      this.queues.set(name, queue);
    }
    return queue;
  }
}
