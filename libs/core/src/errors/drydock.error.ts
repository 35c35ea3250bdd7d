// Errors the caller can act on. Each carries a stable code (asserted by tests and
// clients) and the HTTP status it maps to in the gateway's exception filter.
export class DrydockError extends Error {
  constructor(
    readonly code: string,
    message: string,
    readonly status: number = 400,
    readonly details?: Record<string, unknown>,
  ) {
    super(message);
    this.name = new.target.name;
  }
}

export class NotFoundError extends DrydockError {
  constructor(code: string, message: string) {
    super(code, message, 404);
  }
}

export class ConflictError extends DrydockError {
  constructor(code: string, message: string, details?: Record<string, unknown>) {
    super(code, message, 409, details);
  }
}

export class UnavailableError extends DrydockError {
  constructor(code: string, message: string) {
    super(code, message, 503);
  }
}
