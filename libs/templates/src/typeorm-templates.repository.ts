import { Injectable } from '@nestjs/common';
import { InjectDataSource } from '@nestjs/typeorm';
import { DataSource, In, IsNull, LessThan, type EntityManager, type Repository } from 'typeorm';
import { assertTenant, newId } from '@drydock/core';
import { TemplateEntity, TemplateVersionEntity } from './template.entity.js';
import type {
  PurgeableVersion,
  TemplateBuildInput,
  TemplateBuildResult,
  TemplateOwner,
  TemplateRecord,
  TemplatesRepository,
  TemplateVersionRecord,
} from './templates.repository.js';

const UNIQUE_VIOLATION = '23505';

function templateOf(e: TemplateEntity): TemplateRecord {
  return { id: e.id, tenantId: e.tenantId, name: e.name, description: e.description, poolSize: e.poolSize, createdAt: e.createdAt };
}

function versionOf(e: TemplateVersionEntity): TemplateVersionRecord {
  return {
    templateId: e.templateId,
    version: e.version,
    status: e.status,
    imageRef: e.imageRef,
    imageDigest: e.imageDigest,
    sizeBytes: e.sizeBytes,
    error: e.error,
    builtBy: e.builtBy,
    createdAt: e.createdAt,
    finishedAt: e.finishedAt,
  };
}

const ownerId = (owner: TemplateOwner) => (owner === 'shared' ? null : owner.tenantId);

@Injectable()
export class TypeOrmTemplatesRepository implements TemplatesRepository {
  private readonly templates: Repository<TemplateEntity>;
  private readonly builds: Repository<TemplateVersionEntity>;

  constructor(@InjectDataSource() db: DataSource) {
    this.templates = db.getRepository(TemplateEntity);
    this.builds = db.getRepository(TemplateVersionEntity);
  }

  async addVersion(
    owner: TemplateOwner,
    name: string,
    build: { description?: string; dockerfile: string; files: Record<string, string> },
  ): Promise<{ template: TemplateRecord; version: TemplateVersionRecord }> {
    if (owner !== 'shared') assertTenant(owner.tenantId);
    // Two creations of the same new name at once: the unique index lets one insert the
    // template, and the other finds it on its second try.
    for (let attempt = 0; ; attempt++) {
      try {
        return await this.templates.manager.transaction(async (m) => {
          let template = await this.findIn(m, owner, name, true);
          if (!template) {
            template = m.create(TemplateEntity, { id: newId('tpl'), tenantId: ownerId(owner), name, description: build.description ?? null, poolSize: 0, deletedAt: null });
            await m.insert(TemplateEntity, template);
          } else if (build.description !== undefined) {
            await m.update(TemplateEntity, { id: template.id }, { description: build.description });
            template.description = build.description;
          }
          const [{ next }] = (await m.query(`SELECT coalesce(max(version), 0) + 1 AS next FROM template_versions WHERE template_id = $1`, [template.id])) as { next: number }[];
          const version = m.create(TemplateVersionEntity, {
            templateId: template.id,
            version: Number(next),
            status: 'building',
            dockerfile: build.dockerfile,
            files: build.files,
          });
          await m.insert(TemplateVersionEntity, version);
          const saved = (await m.findOneBy(TemplateVersionEntity, { templateId: template.id, version: Number(next) }))!;
          return { template: templateOf(template), version: versionOf(saved) };
        });
      } catch (error) {
        if ((error as { code?: string }).code !== UNIQUE_VIOLATION || attempt >= 2) throw error;
      }
    }
  }

  // FOR UPDATE when adding a version: versions of one template are numbered one at a time.
  private async findIn(m: EntityManager, owner: TemplateOwner, name: string, lock = false): Promise<TemplateEntity | null> {
    return m.findOne(TemplateEntity, {
      where: { tenantId: owner === 'shared' ? IsNull() : owner.tenantId, name, deletedAt: IsNull() },
      ...(lock ? { lock: { mode: 'pessimistic_write' as const } } : {}),
    });
  }

  async find(owner: TemplateOwner, name: string): Promise<TemplateRecord | null> {
    if (owner !== 'shared') assertTenant(owner.tenantId);
    const entity = await this.findIn(this.templates.manager, owner, name);
    return entity ? templateOf(entity) : null;
  }

  async listVisible(tenantId: string) {
    assertTenant(tenantId);
    return this.listWhere(`(t.tenant_id = $1 OR t.tenant_id IS NULL)`, [tenantId]);
  }

  async listShared() {
    return this.listWhere(`t.tenant_id IS NULL`, []);
  }

  private async listWhere(where: string, params: unknown[]) {
    const rows = (await this.templates.manager.query(`SELECT t.id FROM templates t WHERE ${where} AND t.deleted_at IS NULL`, params)) as { id: string }[];
    const entities = rows.length ? await this.templates.findBy({ id: In(rows.map((r) => r.id)) }) : [];
    const listed = await Promise.all(
      entities.map(async (e) => {
        const latest = await this.builds.findOne({ where: { templateId: e.id }, order: { version: 'DESC' }, select: VERSION_COLUMNS });
        return { template: templateOf(e), latest: latest ? versionOf(latest) : null };
      }),
    );
    // By name; a tenant's own before a shared one of the same name (its own is what the
    // name means to it).
    return listed.sort((a, b) => a.template.name.localeCompare(b.template.name) || (a.template.tenantId === null ? 1 : -1));
  }

  async versions(templateId: string): Promise<TemplateVersionRecord[]> {
    const entities = await this.builds.find({ where: { templateId }, order: { version: 'ASC' }, select: VERSION_COLUMNS });
    return entities.map(versionOf);
  }

  async version(templateId: string, version: number): Promise<TemplateVersionRecord | null> {
    const entity = await this.builds.findOne({ where: { templateId, version }, select: VERSION_COLUMNS });
    return entity ? versionOf(entity) : null;
  }

  async newestReady(templateId: string): Promise<TemplateVersionRecord | null> {
    const entity = await this.builds.findOne({ where: { templateId, status: 'ready' }, order: { version: 'DESC' }, select: VERSION_COLUMNS });
    return entity ? versionOf(entity) : null;
  }

  async log(templateId: string, version: number): Promise<string | null> {
    const entity = await this.builds.findOne({ where: { templateId, version }, select: { templateId: true, log: true } });
    return entity?.log ?? null;
  }

  async markDeleted(templateId: string): Promise<void> {
    await this.templates.update({ id: templateId, deletedAt: IsNull() }, { deletedAt: new Date() });
  }

  async setPoolSize(templateId: string, poolSize: number): Promise<void> {
    await this.templates.update({ id: templateId }, { poolSize });
  }

  async pooled(): Promise<{ template: TemplateRecord; version: TemplateVersionRecord }[]> {
    const entities = await this.templates.createQueryBuilder('t').where('t.pool_size > 0 AND t.deleted_at IS NULL').getMany();
    const out: { template: TemplateRecord; version: TemplateVersionRecord }[] = [];
    for (const entity of entities) {
      const version = await this.newestReady(entity.id);
      if (version?.imageRef) out.push({ template: templateOf(entity), version });
    }
    return out;
  }

  async buildInput(templateId: string, version: number): Promise<TemplateBuildInput | null> {
    const template = await this.templates.findOneBy({ id: templateId });
    const build = await this.builds.findOneBy({ templateId, version });
    if (!template || !build) return null;
    return { template: { ...templateOf(template), deleted: template.deletedAt !== null }, version: versionOf(build), dockerfile: build.dockerfile, files: build.files };
  }

  async startBuild(templateId: string, version: number, workerId: string): Promise<boolean> {
    const result = await this.builds.update({ templateId, version, status: 'building' }, { builtBy: workerId });
    return (result.affected ?? 0) > 0;
  }

  async finishBuild(templateId: string, version: number, result: TemplateBuildResult): Promise<boolean> {
    const changes: Partial<TemplateVersionEntity> =
      result.status === 'ready'
        ? { status: 'ready', imageRef: result.imageRef, imageDigest: result.imageDigest, sizeBytes: result.sizeBytes, log: result.log, error: null }
        : { status: 'failed', error: result.error, log: result.log };
    const updated = await this.builds.update({ templateId, version, status: 'building' }, { ...changes, finishedAt: new Date() });
    return (updated.affected ?? 0) > 0;
  }

  async failLostBuilds(liveWorkers: string[]): Promise<number> {
    const result = (await this.builds.query(
      `UPDATE template_versions SET status = 'failed', finished_at = now(),
         error = 'The worker building it stopped before the build ended; build it again.'
       WHERE status = 'building' AND built_by IS NOT NULL AND NOT (built_by = ANY($1))
       RETURNING template_id`,
      [liveWorkers],
    )) as [unknown[], number];
    return result[1] ?? 0;
  }

  async unclaimedBuilds(before: Date): Promise<{ templateId: string; version: number }[]> {
    const rows = await this.builds.find({ where: { status: 'building', builtBy: IsNull(), createdAt: LessThan(before) }, select: { templateId: true, version: true } });
    return rows.map((r) => ({ templateId: r.templateId, version: r.version }));
  }

  async purgeable(): Promise<PurgeableVersion[]> {
    const rows = (await this.builds.query(
      `SELECT v.template_id, v.version, v.image_ref FROM template_versions v JOIN templates t ON t.id = v.template_id
       WHERE v.image_ref IS NOT NULL AND v.purged_at IS NULL AND t.deleted_at IS NOT NULL
         AND NOT EXISTS (SELECT 1 FROM sessions s WHERE s.image = v.image_ref AND s.status <> 'ended')`,
    )) as { template_id: string; version: number; image_ref: string }[];
    return rows.map((r) => ({ templateId: r.template_id, version: r.version, imageRef: r.image_ref }));
  }

  async markPurged(templateId: string, version: number): Promise<void> {
    await this.builds.update({ templateId, version }, { purgedAt: new Date() });
  }

  async existing(templateIds: string[]): Promise<Set<string>> {
    if (templateIds.length === 0) return new Set();
    const rows = await this.templates.find({ where: { id: In(templateIds) }, select: { id: true } });
    return new Set(rows.map((r) => r.id));
  }

  async imageInUse(imageRef: string): Promise<boolean> {
    const rows = (await this.builds.query(
      `SELECT 1 FROM template_versions v JOIN templates t ON t.id = v.template_id
       WHERE v.image_ref = $1 AND (t.deleted_at IS NULL
         OR EXISTS (SELECT 1 FROM sessions s WHERE s.image = v.image_ref AND s.status <> 'ended')) LIMIT 1`,
      [imageRef],
    )) as unknown[];
    return rows.length > 0;
  }
}

// Every column but the Dockerfile, its files and the log.
const VERSION_COLUMNS = {
  templateId: true,
  version: true,
  status: true,
  imageRef: true,
  imageDigest: true,
  sizeBytes: true,
  error: true,
  builtBy: true,
  createdAt: true,
  finishedAt: true,
} as const;
