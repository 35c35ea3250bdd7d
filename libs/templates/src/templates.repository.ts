import type { TemplateVersionStatus } from './template.entity.js';

// Whose a template is: a tenant's, or `shared` (published by the operators).
export type TemplateOwner = { tenantId: string } | 'shared';

export interface TemplateRecord {
  id: string;
  tenantId: string | null;
  name: string;
  description: string | null;
  poolSize: number;
  createdAt: Date;
}

export interface TemplateVersionRecord {
  templateId: string;
  version: number;
  status: TemplateVersionStatus;
  imageRef: string | null;
  imageDigest: string | null;
  sizeBytes: number | null;
  error: string | null;
  builtBy: string | null;
  createdAt: Date;
  finishedAt: Date | null;
}

// What a worker needs to build a version.
export interface TemplateBuildInput {
  template: TemplateRecord & { deleted: boolean };
  version: TemplateVersionRecord;
  dockerfile: string;
  files: Record<string, string>;
}

export type TemplateBuildResult =
  | { status: 'ready'; imageRef: string; imageDigest: string; sizeBytes: number; log: string }
  | { status: 'failed'; error: string; log: string };

// A version whose image is in the registry though its template is deleted and no live
// session uses it: to be removed from the registry.
export interface PurgeableVersion {
  templateId: string;
  version: number;
  imageRef: string;
}

export interface TemplatesRepository {
  // A new `building` version of the owner's live template `name`, created with it when
  // there is none (its description then set; later versions keep the first one unless
  // they give another).
  addVersion(owner: TemplateOwner, name: string, build: { description?: string; dockerfile: string; files: Record<string, string> }): Promise<{ template: TemplateRecord; version: TemplateVersionRecord }>;
  // The live template `name` of the owner.
  find(owner: TemplateOwner, name: string): Promise<TemplateRecord | null>;
  // The tenant's own live templates and the shared ones, each with its newest version.
  listVisible(tenantId: string): Promise<{ template: TemplateRecord; latest: TemplateVersionRecord | null }[]>;
  listShared(): Promise<{ template: TemplateRecord; latest: TemplateVersionRecord | null }[]>;
  versions(templateId: string): Promise<TemplateVersionRecord[]>;
  version(templateId: string, version: number): Promise<TemplateVersionRecord | null>;
  newestReady(templateId: string): Promise<TemplateVersionRecord | null>;
  // The build's log once it ended; null while it builds (or for an unknown version).
  log(templateId: string, version: number): Promise<string | null>;
  markDeleted(templateId: string): Promise<void>;
  setPoolSize(templateId: string, poolSize: number): Promise<void>;
  // Shared templates (with their newest ready version) whose pool size is above 0, and
  // the tenant templates too: the warm pools workers keep.
  pooled(): Promise<{ template: TemplateRecord; version: TemplateVersionRecord }[]>;

  // Workers.
  buildInput(templateId: string, version: number): Promise<TemplateBuildInput | null>;
  // Claims a `building` version for this worker; false when it has ended meanwhile.
  startBuild(templateId: string, version: number, workerId: string): Promise<boolean>;
  // Records the end of a build that is still `building`; false when it was not.
  finishBuild(templateId: string, version: number, result: TemplateBuildResult): Promise<boolean>;
  // Versions still `building` on a worker that is not in `liveWorkers`: lost with it.
  failLostBuilds(liveWorkers: string[]): Promise<number>;
  // Versions `building` that no worker has taken, queued before `before`.
  unclaimedBuilds(before: Date): Promise<{ templateId: string; version: number }[]>;
  purgeable(): Promise<PurgeableVersion[]>;
  markPurged(templateId: string, version: number): Promise<void>;
  // Whether any version of a live template has this image.
  imageInUse(imageRef: string): Promise<boolean>;
  // Which of these template ids have a row (live or deleted).
  existing(templateIds: string[]): Promise<Set<string>>;
}

export const TEMPLATES_REPOSITORY = Symbol('TEMPLATES_REPOSITORY');
