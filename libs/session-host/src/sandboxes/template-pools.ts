import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { TEMPLATES_REPOSITORY, formatTemplateRef, type TemplatesRepository } from '@drydock/templates';
import { WarmSandboxPool } from './warm-sandbox-pool.js';

// How often a worker reads the template pool sizes operators set.
export const TEMPLATE_POOL_SYNC_MS = 10_000;

// Keeps this worker's template pools (WarmSandboxPool.setTemplatePools) as the
// operators set them (PATCH /admin/templates/:name {poolSize}): each template with a
// pool size gets a pool of its newest ready version; a new version replaces the old
// one's pool, a deleted template or a size of 0 removes it.
@Injectable()
export class TemplatePools {
  private readonly logger = new Logger(TemplatePools.name);
  private failing = false;

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(TEMPLATES_REPOSITORY) private readonly templates: TemplatesRepository,
    private readonly pool: WarmSandboxPool,
  ) {}

  async sync(): Promise<void> {
    if (!this.config.templates.registry) return;
    try {
      const pooled = await this.templates.pooled();
      this.pool.setTemplatePools(
        pooled.map(({ template, version }) => ({ template: formatTemplateRef(template.name, version.version), image: version.imageRef!, size: template.poolSize })),
      );
      this.failing = false;
    } catch (error) {
      // Kept as they were until the database answers again.
      if (!this.failing) this.logger.warn(`reading the template pools failed: ${(error as Error).message}`);
      this.failing = true;
    }
  }
}
