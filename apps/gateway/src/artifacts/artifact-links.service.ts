import { Inject, Injectable } from '@nestjs/common';
import { APP_CONFIG, type AppConfig } from '@drydock/core';
import { ArtifactsError, type ArtifactRecord, UrlSigner } from '@drydock/artifacts';

// Signed download links: HMAC over (artifact, tenant, operation, expiry) with
// ARTIFACTS_SIGNING_SECRET (libs/artifacts/src/signing/url-signer.ts). The gateway does
// not start without the secret (see bootstrap.ts).
@Injectable()
export class ArtifactLinks {
  private readonly signer: UrlSigner;

  constructor(@Inject(APP_CONFIG) private readonly config: AppConfig) {
    const secret = config.artifacts.signingSecret;
    if (!secret) throw new Error('ARTIFACTS_SIGNING_SECRET is required by the gateway (signed artifact links)');
    this.signer = new UrlSigner(secret, { maxTtlSeconds: config.artifacts.urlMaxTtlSeconds });
  }

  sign(record: ArtifactRecord, ttlSeconds: unknown): { url: string; expiresAt: string } {
    const ttl = ttlSeconds === undefined || ttlSeconds === null ? this.config.artifacts.urlDefaultTtlSeconds : ttlSeconds;
    const max = this.config.artifacts.urlMaxTtlSeconds;
    if (typeof ttl !== 'number' || !Number.isInteger(ttl) || ttl < 1 || ttl > max) throw ArtifactsError.ttlOutOfRange(ttl, max);
    const { expires, signature } = this.signer.sign(
      { artifactId: record.id, tenantId: record.tenantId, operation: 'download' },
      ttl,
    );
    const query = new URLSearchParams({ tenant: record.tenantId, expires: String(expires), signature });
    return {
      url: `/v1/signed/artifacts/${encodeURIComponent(record.id)}?${query}`,
      expiresAt: new Date(expires * 1000).toISOString(),
    };
  }

  // The tenant a link was signed for, or a 403 that does not say what was wrong.
  verify(artifactId: string, query: Record<string, unknown>): string {
    const tenantId = query.tenant;
    if (typeof tenantId !== 'string' || tenantId.length === 0) throw ArtifactsError.invalidSignature();
    const verdict = this.signer.verify(
      { artifactId, tenantId, operation: 'download' },
      { expires: query.expires, signature: query.signature },
    );
    if (verdict.ok) return tenantId;
    throw verdict.reason === 'expired' ? ArtifactsError.urlExpired() : ArtifactsError.invalidSignature();
  }
}
