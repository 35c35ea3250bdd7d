// What agent definitions ask of templates: that a tenant can name one (its own or a
// shared one; TEMPLATE_NOT_FOUND otherwise). The gateway binds TemplatesService.
export interface TemplateNames {
  assertVisible(tenantId: string, ref: string): Promise<void>;
}

export const TEMPLATE_NAMES = Symbol('TEMPLATE_NAMES');
