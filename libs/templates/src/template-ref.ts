import { TemplatesError } from './templates.errors.js';

// A template's name: what a Docker repository path segment allows, lowercase.
export const TEMPLATE_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

// "name" (its newest ready version) or "name:version" (that one).
export interface TemplateRef {
  name: string;
  version: number | null;
}

export function parseTemplateRef(ref: string): TemplateRef {
  const match = /^([^:]+)(?::([1-9][0-9]{0,8}))?$/.exec(ref);
  if (!match || !TEMPLATE_NAME.test(match[1]!)) throw TemplatesError.invalidRef(ref);
  return { name: match[1]!, version: match[2] === undefined ? null : Number(match[2]) };
}

export function formatTemplateRef(name: string, version: number): string {
  return `${name}:${version}`;
}

// The registry repository of a template's images (its id, not its name: names are
// reused after a delete, and say nothing of the tenant): <registry>/drydock-templates/<id>.
export const TEMPLATE_REPOSITORY_PREFIX = 'drydock-templates/';
export function templateRepository(templateId: string): string {
  return `${TEMPLATE_REPOSITORY_PREFIX}${templateId.toLowerCase()}`;
}
