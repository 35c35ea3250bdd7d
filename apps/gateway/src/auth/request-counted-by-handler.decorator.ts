import { SetMetadata } from '@nestjs/common';

export const REQUEST_COUNTED_BY_HANDLER = 'drydock:request-counted-by-handler';

// On a route whose handler counts its own request against the tenant's requests per
// minute (TenantRateLimiter.executionAdmission with `countRequest`), in the same Redis
// round trip as the rest of its admission: the tenant guard then does not count it.
// A route marked so that does not count the request escapes the limit.
export const RequestCountedByHandler = () => SetMetadata(REQUEST_COUNTED_BY_HANDLER, true);
