import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { TEMPLATE_IMAGE_BUILDER, type TemplateImageBuilder } from '@drydock/execution';
import { TEMPLATE_BUILD_LOCK_MS, TemplateBuildQueue } from './template-build-queue.js';
import { TEMPLATE_REPOSITORY_PREFIX } from './template-ref.js';
import { TEMPLATES_REPOSITORY, type TemplatesRepository } from './templates.repository.js';

// Where a live worker's registry entry is read from: the gateway and the worker share
// WORKER_REGISTRY, which libs/sessions binds; this lib takes just the question.
export const LIVE_WORKER_IDS = Symbol('LIVE_WORKER_IDS');
export type LiveWorkerIds = () => Promise<string[]>;

// Template housekeeping on the workers:
// - `run` (the shared maintenance queue, one worker a period): builds whose worker is
//   gone are failed, and the images of deleted templates that no live session uses
//   leave the registry;
// - `sweepLocalImages` (each worker): its engine's template images that nothing needs
//   any more (their template deleted, no session on them) are removed, and what builds
//   left (containers of a worker killed mid-build, runtime volumes of old platform
//   images).
@Injectable()
export class TemplateMaintenance {
  private readonly logger = new Logger(TemplateMaintenance.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(TEMPLATES_REPOSITORY) private readonly templates: TemplatesRepository,
    @Inject(TEMPLATE_IMAGE_BUILDER) private readonly builder: TemplateImageBuilder,
    @Inject(LIVE_WORKER_IDS) private readonly liveWorkers: LiveWorkerIds,
    private readonly queue: TemplateBuildQueue,
  ) {}

  async run(): Promise<{ lostBuilds: number; requeued: number; purged: number }> {
    // A build claimed by a worker that is gone is lost (it is not run twice).
    const lostBuilds = await this.templates.failLostBuilds(await this.liveWorkers());
    if (lostBuilds) this.logger.warn(`${lostBuilds} template builds lost with their worker were failed`);
    // One no worker took yet may wait behind other builds; queued again in case its job
    // was lost (Redis restarted without its data): the job id makes it a no-op otherwise.
    const unclaimed = await this.templates.unclaimedBuilds(new Date(Date.now() - TEMPLATE_BUILD_LOCK_MS));
    for (const build of unclaimed) await this.queue.enqueue(build);
    const requeued = unclaimed.length;
    let purged = 0;
    if (!this.config.templates.registry) return { lostBuilds, requeued, purged };
    for (const version of await this.templates.purgeable()) {
      try {
        await this.builder.deleteFromRegistry(version.imageRef);
        await this.templates.markPurged(version.templateId, version.version);
        purged++;
      } catch (error) {
        this.logger.warn(`removing ${version.imageRef} from the registry failed: ${(error as Error).message}`);
      }
    }
    // Repositories of templates that have no row at all (their tenant was deleted, and
    // its rows with it): every image goes.
    const repositories = await this.builder.registryRepositories();
    const known = await this.templates.existing(repositories.map((r) => r.slice(TEMPLATE_REPOSITORY_PREFIX.length)));
    for (const repository of repositories) {
      if (known.has(repository.slice(TEMPLATE_REPOSITORY_PREFIX.length))) continue;
      for (const ref of await this.builder.registryImages(repository)) {
        await this.builder
          .deleteFromRegistry(ref)
          .then(() => purged++)
          .catch((error: Error) => this.logger.warn(`removing ${ref} from the registry failed: ${error.message}`));
      }
    }
    if (purged) this.logger.log(`${purged} images of deleted templates removed from the registry`);
    return { lostBuilds, requeued, purged };
  }

  async sweepLocalImages(): Promise<number> {
    let removed = await this.builder.sweepLeftovers().catch((error: Error) => {
      this.logger.warn(`sweeping what template builds left failed: ${error.message}`);
      return 0;
    });
    for (const ref of await this.builder.localTemplateImages()) {
      if (await this.templates.imageInUse(ref)) continue;
      // A container still on it (a session ending now) keeps it until the next sweep.
      if (await this.builder.removeImage(ref).catch(() => false)) removed++;
    }
    return removed;
  }
}
