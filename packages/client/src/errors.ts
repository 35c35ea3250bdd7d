// Every error the platform answers is {"error": {code, message, details?}} with a stable
// code; the client throws it as a DrydockError carrying that code.
export class DrydockError extends Error {
  override readonly name: string = 'DrydockError';

  constructor(
    // The platform's stable code (e.g. FILE_NOT_FOUND), or NETWORK_ERROR / INVALID_RESPONSE
    // for a failure before an answer could be read.
    readonly code: string,
    message: string,
    // The HTTP status, or 0 when no answer arrived.
    readonly status: number,
    readonly details?: Record<string, unknown>,
    // The X-Request-Id of the answer: quote it to the operator.
    readonly requestId?: string,
  ) {
    super(message);
  }
}

export const isDrydockError = (error: unknown, code?: string): error is DrydockError =>
  error instanceof DrydockError && (code === undefined || error.code === code);

// A template version whose build ended `failed` (templates.build(…).wait()): `buildError`
// is the platform's reason, which names the failing step and ends with its output.
export class TemplateBuildError extends DrydockError {
  override readonly name = 'TemplateBuildError';

  constructor(
    readonly template: string,
    readonly version: number,
    readonly buildError: string,
  ) {
    super('TEMPLATE_BUILD_FAILED', `Template ${template}:${version} failed to build: ${buildError}`, 0, { template, version });
  }
}
