import { Inject, Injectable, Logger } from '@nestjs/common';
import { APP_CONFIG, ServiceUnavailableError, type AppConfig } from '@drydock/core';
import { checkDockerfile } from './dockerfile-rules.js';
import { TemplateBuildLogs, type TemplateLogEvent } from './template-build-logs.js';
import { TemplateBuildQueue } from './template-build-queue.js';
import { formatTemplateRef, parseTemplateRef, TEMPLATE_NAME } from './template-ref.js';
import { toTemplateSummary, toTemplateView, type TemplateSummaryView, type TemplateView } from './template.view.js';
import { TemplatesError } from './templates.errors.js';
import { TEMPLATES_REPOSITORY, type TemplateOwner, type TemplateRecord, type TemplatesRepository } from './templates.repository.js';

export interface CreateTemplateCommand {
  name: string;
  dockerfile: string;
  files?: Record<string, string>;
  description?: string;
}

// What a session, batch or agent started from a template runs: the version a reference
// meant when it was resolved, and the image workers pull for it.
export interface ResolvedTemplate {
  templateId: string;
  name: string;
  version: number;
  // "name:version", as sessions show it.
  ref: string;
  imageRef: string;
}

// A context file's path: relative, of plain segments.
const CONTEXT_PATH = /^(?!.*(?:^|\/)\.{1,2}(?:\/|$))[A-Za-z0-9._-]+(?:\/[A-Za-z0-9._-]+)*$/;

// Templates for the gateway: tenants' own (`{tenantId}`) and the shared ones the
// operators publish (`'shared'`), their builds (queued for a worker, followed through
// their log) and the resolution of a reference to the image a sandbox starts from.
@Injectable()
export class TemplatesService {
  private readonly logger = new Logger(TemplatesService.name);

  constructor(
    @Inject(APP_CONFIG) private readonly config: AppConfig,
    @Inject(TEMPLATES_REPOSITORY) private readonly templates: TemplatesRepository,
    private readonly queue: TemplateBuildQueue,
    private readonly logs: TemplateBuildLogs,
  ) {}

  // A new version of the owner's template `name` (the template too, the first time),
  // queued for a worker to build.
  async create(owner: TemplateOwner, command: CreateTemplateCommand): Promise<{ name: string; version: number; status: 'building' }> {
    if (!this.config.templates.registry) throw TemplatesError.unavailable();
    const files = this.checkContext(command);
    const check = checkDockerfile(command.dockerfile);
    if (check.problems.length > 0) throw TemplatesError.invalidDockerfile(check.problems);
    this.queue.assertReady();
    const { template, version } = await this.templates.addVersion(owner, command.name, {
      description: command.description,
      dockerfile: command.dockerfile,
      files,
    });
    try {
      await this.queue.enqueue({ templateId: template.id, version: version.version });
    } catch (error) {
      // Not left `building` with no build coming (Redis went between the check and the add).
      await this.templates.finishBuild(template.id, version.version, { status: 'failed', error: 'The build could not be queued; build it again.', log: '' });
      this.logger.warn(`queueing the build of ${template.id}:${version.version} failed: ${(error as Error).message}`);
      throw new ServiceUnavailableError('redis');
    }
    this.logger.log(`template ${template.id} (${command.name}) version ${version.version} queued`);
    return { name: template.name, version: version.version, status: 'building' };
  }

  private checkContext(command: CreateTemplateCommand): Record<string, string> {
    const limits = this.config.templates;
    if (!TEMPLATE_NAME.test(command.name)) throw TemplatesError.invalidRef(command.name);
    const dockerfileBytes = Buffer.byteLength(command.dockerfile);
    if (dockerfileBytes > limits.maxDockerfileBytes) {
      throw TemplatesError.contextTooLarge(`the Dockerfile has ${dockerfileBytes} bytes, more than the ${limits.maxDockerfileBytes} allowed`);
    }
    const files = command.files ?? {};
    const paths = Object.keys(files);
    if (paths.length > limits.maxContextFiles) {
      throw TemplatesError.contextTooLarge(`it sends ${paths.length} files, more than the ${limits.maxContextFiles} allowed`);
    }
    let total = dockerfileBytes;
    for (const path of paths) {
      if (path.length > 255 || !CONTEXT_PATH.test(path)) {
        throw TemplatesError.invalidContext(`"${path}" is not a relative path of plain names (letters, digits, ".", "_", "-", no "." or ".." segment)`);
      }
      if (path === 'Dockerfile' || path === '.dockerignore') throw TemplatesError.invalidContext(`"${path}" is the platform's; send the Dockerfile as "dockerfile"`);
      if (typeof files[path] !== 'string') throw TemplatesError.invalidContext(`"${path}" is not text`);
      total += Buffer.byteLength(files[path]!);
    }
    for (const path of paths) {
      const parent = paths.find((other) => path.startsWith(`${other}/`));
      if (parent) throw TemplatesError.invalidContext(`"${parent}" is a file and the folder of "${path}"`);
    }
    if (total > limits.maxContextBytes) {
      throw TemplatesError.contextTooLarge(`the Dockerfile and files hold ${total} bytes, more than the ${limits.maxContextBytes} allowed`);
    }
    return { ...files };
  }

  async list(tenantId: string): Promise<TemplateSummaryView[]> {
    return (await this.templates.listVisible(tenantId)).map(({ template, latest }) => toTemplateSummary(template, latest));
  }

  async listShared(): Promise<TemplateSummaryView[]> {
    return (await this.templates.listShared()).map(({ template, latest }) => toTemplateSummary(template, latest));
  }

  async get(viewer: TemplateOwner, name: string): Promise<TemplateView> {
    const template = await this.visible(viewer, name);
    return toTemplateView(template, await this.templates.versions(template.id));
  }

  // The template a name means to this viewer: its own, else the shared one.
  // `ref` is what the 404 names (the reference as the caller wrote it).
  private async visible(viewer: TemplateOwner, name: string, ref = name): Promise<TemplateRecord> {
    if (!TEMPLATE_NAME.test(name)) throw TemplatesError.notFound(ref);
    const template = (viewer === 'shared' ? null : await this.templates.find(viewer, name)) ?? (await this.templates.find('shared', name));
    if (!template) throw TemplatesError.notFound(ref);
    return template;
  }

  async delete(owner: TemplateOwner, name: string): Promise<void> {
    const template = await this.visible(owner, name);
    if (owner !== 'shared' && template.tenantId === null) throw TemplatesError.shared(name);
    await this.templates.markDeleted(template.id);
    this.logger.log(`template ${template.id} (${name}) deleted`);
  }

  // The warm pool size of a shared template, or of a tenant's (`tenantId`).
  async setPoolSize(name: string, poolSize: number, tenantId?: string): Promise<TemplateView> {
    const owner: TemplateOwner = tenantId ? { tenantId } : 'shared';
    const template = TEMPLATE_NAME.test(name) ? await this.templates.find(owner, name) : null;
    if (!template) throw TemplatesError.notFound(name);
    await this.templates.setPoolSize(template.id, poolSize);
    return toTemplateView({ ...template, poolSize }, await this.templates.versions(template.id));
  }

  // The log of a version, from its first line, as the build goes, then `done`; the
  // version is looked up first (404 TEMPLATE_NOT_FOUND before any event).
  async follow(viewer: TemplateOwner, name: string, version: number, signal: AbortSignal): Promise<AsyncGenerator<TemplateLogEvent>> {
    const template = await this.visible(viewer, name);
    const record = await this.templates.version(template.id, version);
    if (!record) throw TemplatesError.notFound(formatTemplateRef(name, version));
    return this.logs.follow(
      template.id,
      version,
      async () => {
        const now = (await this.templates.version(template.id, version))!;
        return { status: now.status, error: now.error, log: await this.templates.log(template.id, version) };
      },
      signal,
    );
  }

  // That the tenant can name the template (its own or a shared one), ready or not:
  // 404 TEMPLATE_NOT_FOUND otherwise (an agent definition naming one).
  async assertVisible(tenantId: string, ref: string): Promise<void> {
    await this.visible({ tenantId }, parseTemplateRef(ref).name, ref);
  }

  // What `template: "name"` or `"name:version"` means now for this tenant: a ready
  // version's image. 404 TEMPLATE_NOT_FOUND, 409 TEMPLATE_NOT_READY.
  async resolve(tenantId: string, ref: string): Promise<ResolvedTemplate> {
    const parsed = parseTemplateRef(ref);
    // Only a missing template is a 404: a database that does not answer stays a 503.
    const template = await this.visible({ tenantId }, parsed.name, ref);
    const version =
      parsed.version === null ? await this.templates.newestReady(template.id) : await this.templates.version(template.id, parsed.version);
    if (!version) {
      if (parsed.version !== null) throw TemplatesError.notFound(ref);
      const newest = (await this.templates.versions(template.id)).at(-1);
      throw TemplatesError.notReady(ref, newest?.status === 'building' ? `version ${newest.version} is still building` : 'none of its versions built');
    }
    if (version.status === 'building') throw TemplatesError.notReady(ref, `version ${version.version} is still building`);
    if (version.status === 'failed' || !version.imageRef) throw TemplatesError.notReady(ref, `version ${version.version} failed to build`);
    return { templateId: template.id, name: template.name, version: version.version, ref: formatTemplateRef(template.name, version.version), imageRef: version.imageRef };
  }
}
