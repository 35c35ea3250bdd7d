import type { TemplateRecord, TemplateVersionRecord } from './templates.repository.js';

export interface TemplateVersionView {
  version: number;
  status: TemplateVersionRecord['status'];
  imageDigest: string | null;
  sizeBytes: number | null;
  createdAt: string;
  finishedAt: string | null;
  error: string | null;
}

export interface TemplateSummaryView {
  name: string;
  shared: boolean;
  description: string | null;
  poolSize: number;
  latest: { version: number; status: TemplateVersionRecord['status'] } | null;
}

export interface TemplateView {
  name: string;
  shared: boolean;
  description: string | null;
  poolSize: number;
  createdAt: string;
  versions: TemplateVersionView[];
}

export function toVersionView(v: TemplateVersionRecord): TemplateVersionView {
  return {
    version: v.version,
    status: v.status,
    imageDigest: v.imageDigest,
    sizeBytes: v.sizeBytes,
    createdAt: v.createdAt.toISOString(),
    finishedAt: v.finishedAt?.toISOString() ?? null,
    error: v.error,
  };
}

export function toTemplateSummary(template: TemplateRecord, latest: TemplateVersionRecord | null): TemplateSummaryView {
  return {
    name: template.name,
    shared: template.tenantId === null,
    description: template.description,
    poolSize: template.poolSize,
    latest: latest ? { version: latest.version, status: latest.status } : null,
  };
}

export function toTemplateView(template: TemplateRecord, versions: TemplateVersionRecord[]): TemplateView {
  return {
    name: template.name,
    shared: template.tenantId === null,
    description: template.description,
    poolSize: template.poolSize,
    createdAt: template.createdAt.toISOString(),
    versions: versions.map(toVersionView),
  };
}
