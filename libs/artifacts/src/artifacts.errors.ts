import { DrydockError } from '@drydock/core';

// Failures of the artifact routes. A missing artifact and another tenant's answer the
// same 404; a bad signed URL never says which part was wrong.
export class ArtifactsError extends DrydockError {
  static notFound(id: string) {
    return new ArtifactsError('ARTIFACT_NOT_FOUND', `No artifact ${id}.`, 404);
  }
  static rangeNotSatisfiable(size: number) {
    return new ArtifactsError(
      'RANGE_NOT_SATISFIABLE',
      `The requested range is outside the artifact's ${size} bytes.`,
      416,
      { size },
    );
  }
  static ttlOutOfRange(ttlSeconds: unknown, maxTtlSeconds: number) {
    return new ArtifactsError(
      'TTL_OUT_OF_RANGE',
      `ttlSeconds must be a whole number from 1 to ${maxTtlSeconds}; got ${JSON.stringify(ttlSeconds)}.`,
      400,
      { maxTtlSeconds },
    );
  }
  static invalidSignature() {
    return new ArtifactsError('INVALID_SIGNATURE', 'This download link is not valid.', 403);
  }
  static urlExpired() {
    return new ArtifactsError('URL_EXPIRED', 'This download link has expired; ask for a new one.', 403);
  }
}

// A store that would take the tenant past its artifact count or bytes. The worker
// reports the file as not stored (reason `quota`); the run itself succeeds.
export class ArtifactQuotaExceededError extends Error {
  constructor(
    readonly limit: 'count' | 'bytes',
    readonly max: number,
  ) {
    super(limit === 'count' ? `the tenant already has its maximum of ${max} artifacts` : `the tenant's artifacts would exceed ${max} bytes`);
    this.name = 'ArtifactQuotaExceededError';
  }
}
