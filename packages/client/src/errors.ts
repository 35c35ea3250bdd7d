// Every error the platform answers is {"error": {code, message, details?}} with a stable
// code; the client throws it as a DrydockError carrying that code.
export class DrydockError extends Error {
  override readonly name = 'DrydockError';

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
