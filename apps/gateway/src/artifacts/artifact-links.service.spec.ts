import { makeConfig } from '../../../../test/factories/config.factory.js';
import { ArtifactLinks } from './artifact-links.service.js';

const record = { id: 'art_00000000000000000000', tenantId: 'ten_a' } as never;
const SECRET = { ARTIFACTS_SIGNING_SECRET: 'unit-signing-secret-0123456789abcdef0123' };

describe(ArtifactLinks.name, () => {
  it('should refuse to exist without a signing secret, so the gateway does not start', () => {
    expect(() => new ArtifactLinks(makeConfig())).toThrow(/ARTIFACTS_SIGNING_SECRET/);
  });

  it('should refuse a secret that is too short at configuration time', () => {
    expect(() => makeConfig({ ARTIFACTS_SIGNING_SECRET: 'short' })).toThrow(/ARTIFACTS_SIGNING_SECRET/);
  });

  it('should sign a link that verifies for its tenant and for no other', () => {
    const links = new ArtifactLinks(makeConfig(SECRET));
    const { url } = links.sign(record, 60);
    const query = Object.fromEntries(new URL(url, 'http://x').searchParams);
    expect(links.verify('art_00000000000000000000', query)).toBe('ten_a');
    expect(() => links.verify('art_00000000000000000000', { ...query, tenant: 'ten_b' })).toThrow(
      expect.objectContaining({ code: 'INVALID_SIGNATURE', status: 403 }),
    );
  });

  it('should use the default lifetime and refuse lifetimes out of range', () => {
    const links = new ArtifactLinks(makeConfig({ ...SECRET, ARTIFACTS_URL_DEFAULT_TTL_S: '120', ARTIFACTS_URL_MAX_TTL_S: '600' }));
    const expiresIn = new Date(links.sign(record, undefined).expiresAt).getTime() - Date.now();
    expect(expiresIn).toBeGreaterThan(100_000);
    expect(expiresIn).toBeLessThanOrEqual(120_000);
    for (const ttl of [0, -1, 1.5, '60', 601]) {
      expect(() => links.sign(record, ttl)).toThrow(expect.objectContaining({ code: 'TTL_OUT_OF_RANGE', status: 400 }));
    }
  });
});
