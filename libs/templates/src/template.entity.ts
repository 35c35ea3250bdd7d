import { Column, CreateDateColumn, Entity, Index, PrimaryColumn } from 'typeorm';

export type TemplateVersionStatus = 'building' | 'ready' | 'failed';

// A template: a name in a tenant's namespace (tenantId null: shared by the operators
// with every tenant), with its numbered versions. Deleting it marks it deleted; its
// images leave the registry and the workers once no live session uses them.
@Entity({ name: 'templates' })
@Index('templates_tenant_name_idx', ['tenantId', 'name'])
export class TemplateEntity {
  @PrimaryColumn({ type: 'text' })
  id: string;

  @Column({ name: 'tenant_id', type: 'text', nullable: true })
  tenantId: string | null;

  @Column({ type: 'text' })
  name: string;

  @Column({ type: 'text', nullable: true })
  description: string | null;

  // Started sandboxes of its newest ready version each worker keeps (operators set it).
  @Column({ name: 'pool_size', type: 'integer', default: 0 })
  poolSize: number;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'deleted_at', type: 'timestamptz', nullable: true })
  deletedAt: Date | null;
}

// One build of a template: immutable once it is ready or failed.
@Entity({ name: 'template_versions' })
export class TemplateVersionEntity {
  @PrimaryColumn({ name: 'template_id', type: 'text' })
  templateId: string;

  @PrimaryColumn({ type: 'integer' })
  version: number;

  @Column({ type: 'text' })
  status: TemplateVersionStatus;

  @Column({ type: 'text' })
  dockerfile: string;

  // Context files sent with the Dockerfile: relative path -> text.
  @Column({ type: 'jsonb', default: () => "'{}'" })
  files: Record<string, string>;

  // Where workers pull it: <registry>/<repository>@<digest>.
  @Column({ name: 'image_ref', type: 'text', nullable: true })
  imageRef: string | null;

  @Column({ name: 'image_digest', type: 'text', nullable: true })
  imageDigest: string | null;

  @Column({ name: 'size_bytes', type: 'bigint', nullable: true, transformer: { to: (v: number | null) => v, from: (v: string | null) => (v === null ? null : Number(v)) } })
  sizeBytes: number | null;

  @Column({ type: 'text', nullable: true })
  error: string | null;

  // The build's log once it ended (its live lines are in Redis while it runs).
  @Column({ type: 'text', nullable: true })
  log: string | null;

  // The worker that built (or builds) it.
  @Column({ name: 'built_by', type: 'text', nullable: true })
  builtBy: string | null;

  @CreateDateColumn({ name: 'created_at', type: 'timestamptz' })
  createdAt: Date;

  @Column({ name: 'finished_at', type: 'timestamptz', nullable: true })
  finishedAt: Date | null;

  // Set once its image left the registry (the template was deleted).
  @Column({ name: 'purged_at', type: 'timestamptz', nullable: true })
  purgedAt: Date | null;
}

export const TEMPLATE_ENTITIES = [TemplateEntity, TemplateVersionEntity];
