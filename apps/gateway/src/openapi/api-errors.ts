import { ApiProperty, ApiPropertyOptional } from '@nestjs/swagger';

// The error envelope every 4xx/5xx answer has (error-response.filter.ts).
export class ErrorDetailDto {
  @ApiProperty({ description: 'A stable code clients can branch on, e.g. SESSION_NOT_FOUND.', example: 'SESSION_NOT_FOUND' })
  code: string;

  @ApiProperty({ description: 'A sentence a person understands.', example: 'No session "ses_…" for this tenant.' })
  message: string;

  @ApiPropertyOptional({ description: 'Machine-readable context, e.g. problems, index, retryAfterSeconds.', type: 'object', additionalProperties: true })
  details?: Record<string, unknown>;
}

export class ErrorEnvelopeDto {
  @ApiProperty({ type: () => ErrorDetailDto })
  error: ErrorDetailDto;
}

// HTTP status → the codes a route may answer with it.
export type ErrorCodes = Partial<Record<number, readonly string[]>>;

// Codes declared with @ApiErrors, keyed by controller name (class-wide codes) or by
// "Controller_method" (one route's). The document builder merges both into each
// operation's responses, so a route lists its own codes and its controller's.
const declared = new Map<string, ErrorCodes[]>();

export function ApiErrors(codes: ErrorCodes): ClassDecorator & MethodDecorator {
  return ((target: object | (new (...args: never[]) => unknown), key?: string | symbol) => {
    declareErrors(key === undefined ? (target as { name: string }).name : `${(target as object).constructor.name}_${String(key)}`, codes);
  }) as ClassDecorator & MethodDecorator;
}

// The same for a route that is not a controller's (the terminal WebSocket): `name` is
// its operationId ("Name_method") or the name part alone for codes of all its routes.
export function declareErrors(name: string, codes: ErrorCodes): void {
  declared.set(name, [...(declared.get(name) ?? []), codes]);
}

export function declaredErrors(controller: string, method: string): Map<number, Set<string>> {
  const merged = new Map<number, Set<string>>();
  for (const codes of [...(declared.get(controller) ?? []), ...(declared.get(`${controller}_${method}`) ?? [])]) {
    for (const [status, list] of Object.entries(codes)) {
      const set = merged.get(Number(status)) ?? new Set<string>();
      for (const code of list ?? []) set.add(code);
      merged.set(Number(status), set);
    }
  }
  return merged;
}

// Groups most routes share.
export const TENANT_AUTH_ERRORS: ErrorCodes = {
  401: ['UNAUTHORIZED', 'INVALID_API_KEY'],
  403: ['TENANT_SUSPENDED'],
  429: ['RATE_LIMITED'],
  503: ['SERVICE_UNAVAILABLE'],
};

export const ADMIN_AUTH_ERRORS: ErrorCodes = {
  401: ['UNAUTHORIZED', 'INVALID_ADMIN_KEY'],
  503: ['SERVICE_UNAVAILABLE'],
};

// A body or query the ValidationPipe checks.
export const VALIDATION_ERRORS: ErrorCodes = { 400: ['VALIDATION_FAILED', 'INVALID_JSON', 'JSON_TOO_DEEP'], 413: ['BODY_TOO_LARGE'] };
