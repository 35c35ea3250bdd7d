import { DrydockError } from '@drydock/core';

export class TemplatesError extends DrydockError {
  static notFound(ref: string) {
    return new TemplatesError('TEMPLATE_NOT_FOUND', `No template "${ref}".`, 404);
  }
  static notReady(ref: string, why: string) {
    return new TemplatesError('TEMPLATE_NOT_READY', `Template "${ref}" is not ready: ${why}.`, 409);
  }
  static invalidRef(ref: string) {
    return new TemplatesError(
      'INVALID_TEMPLATE',
      `"${ref}" is not a template reference: use "name" or "name:version" (a name is lowercase letters, digits, ".", "_" and "-", starting with a letter or digit, at most 63 characters).`,
      400,
    );
  }
  static invalidDockerfile(problems: string[]) {
    return new TemplatesError('INVALID_DOCKERFILE', `The Dockerfile cannot be built: ${problems.join('; ')}.`, 400, { problems });
  }
  static invalidContext(problem: string) {
    return new TemplatesError('INVALID_TEMPLATE_CONTEXT', `The template's files are invalid: ${problem}.`, 400);
  }
  static contextTooLarge(problem: string) {
    return new TemplatesError('TEMPLATE_CONTEXT_TOO_LARGE', `The template is too large to build: ${problem}.`, 413);
  }
  static shared(name: string) {
    return new TemplatesError('TEMPLATE_SHARED', `Template "${name}" is shared by the operators; only they can change or delete it.`, 403);
  }
  static unavailable() {
    return new TemplatesError(
      'TEMPLATES_UNAVAILABLE',
      'Templates are not enabled on this deployment: the operator sets TEMPLATE_REGISTRY to the registry workers pull from.',
      503,
    );
  }
}
