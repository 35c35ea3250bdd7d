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

  // Builds the error from a non-2xx answer (its body may be JSON or not).
  static async fromResponse(response: Response): Promise<DrydockError> {
    const requestId = response.headers.get('x-request-id') ?? undefined;
    const text = await response.text().catch(() => '');
    try {
      const body = JSON.parse(text) as { error?: { code?: unknown; message?: unknown; details?: Record<string, unknown> } };
      if (body.error && typeof body.error.code === 'string') {
        return new DrydockError(body.error.code, String(body.error.message ?? body.error.code), response.status, body.error.details, requestId);
      }
    } catch {
      // not JSON: below
    }
    return new DrydockError('HTTP_ERROR', `HTTP ${response.status}${text ? `: ${text.slice(0, 200)}` : ''}`, response.status, undefined, requestId);
  }
}

export const isDrydockError = (error: unknown, code?: string): error is DrydockError =>
  error instanceof DrydockError && (code === undefined || error.code === code);
