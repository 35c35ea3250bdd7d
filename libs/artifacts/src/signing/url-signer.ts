import { createHmac, timingSafeEqual } from 'node:crypto';

// Signed artifact download URLs: an HMAC-SHA256 over the claims and an expiry, carried
// as `?expires=…&signature=…`. Dependency-free (node:crypto only). Revocation is by
// rotating the secret: a signer with another secret rejects every URL signed before.

export type SignedOperation = 'download';

export interface UrlClaims {
  artifactId: string;
  tenantId: string;
  operation: SignedOperation;
}

export interface SignedParams {
  /** Unix seconds. */
  expires: number;
  /** HMAC-SHA256, base64url without padding (43 characters). */
  signature: string;
}

export type VerifyResult = { ok: true } | { ok: false; reason: 'expired' | 'invalid' };

export interface UrlSignerOptions {
  maxTtlSeconds: number;
  /** Milliseconds since the epoch; defaults to Date.now. */
  now?: () => number;
}

export class UrlSignerConfigError extends Error {
  constructor(message: string) {
    super(message);
    this.name = 'UrlSignerConfigError';
  }
}

export class TtlOutOfRangeError extends Error {
  constructor(
    readonly ttlSeconds: number,
    readonly maxTtlSeconds: number,
  ) {
    super(`A signed URL lifetime must be a whole number of seconds from 1 to ${maxTtlSeconds}; got ${String(ttlSeconds)}.`);
    this.name = 'TtlOutOfRangeError';
  }
}

export const MIN_SECRET_LENGTH = 32;
// Tolerated drift between the clock of the signer and the clock of the verifier.
const CLOCK_SLACK_SECONDS = 60;
const VERSION = 'drydock-url-v1';
// Only decimal digits: no sign, exponent, fraction or whitespace; 12 digits is year ~33658.
const EXPIRES = /^[0-9]{1,12}$/;
// 32 bytes in base64url without padding.
const SIGNATURE = /^[A-Za-z0-9_-]{43}$/;

const INVALID: VerifyResult = Object.freeze({ ok: false, reason: 'invalid' });
const EXPIRED: VerifyResult = Object.freeze({ ok: false, reason: 'expired' });
const OK: VerifyResult = Object.freeze({ ok: true });

// Lone UTF-16 surrogates all encode to U+FFFD in UTF-8, so two different ids would
// share one signed message; they are refused like newlines.
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

// Reads each claim once into a plain object (so a getter cannot change a value between
// the check and the signature), or returns why the claims are unusable: each must be a
// non-empty string without a newline, the separator of the signed message, so no two
// claim sets produce the same message.
function readClaims(claims: unknown): UrlClaims | string {
  if (typeof claims !== 'object' || claims === null) return 'claims must be an object';
  const { artifactId, tenantId, operation } = claims as Record<string, unknown>;
  for (const [name, value] of [
    ['artifactId', artifactId],
    ['tenantId', tenantId],
    ['operation', operation],
  ] as const) {
    if (typeof value !== 'string' || value.length === 0) return `${name} must be a non-empty string`;
    if (value.includes('\n')) return `${name} must not contain a newline`;
    if (LONE_SURROGATE.test(value)) return `${name} must be valid Unicode`;
  }
  if (operation !== 'download') return 'operation must be "download"';
  return { artifactId: artifactId as string, tenantId: tenantId as string, operation };
}

// The canonical decimal text of `expires` as received, or undefined when it is not
// plain digits. The text (not its numeric value) is signed, so "0123" is not "123".
function expiresText(expires: unknown): string | undefined {
  let text: string;
  if (typeof expires === 'string') text = expires;
  else if (typeof expires === 'number' && Number.isSafeInteger(expires) && expires >= 0) text = String(expires);
  else return undefined;
  return EXPIRES.test(text) ? text : undefined;
}

export class UrlSigner {
  readonly #secret: string;
  readonly #maxTtlSeconds: number;
  readonly #now: () => number;

  constructor(secret: string, options: UrlSignerOptions) {
    if (typeof secret !== 'string' || secret.length < MIN_SECRET_LENGTH) {
      throw new UrlSignerConfigError(`The URL signing secret must be at least ${MIN_SECRET_LENGTH} characters long.`);
    }
    const maxTtlSeconds = options?.maxTtlSeconds;
    if (typeof maxTtlSeconds !== 'number' || !Number.isSafeInteger(maxTtlSeconds) || maxTtlSeconds <= 0) {
      throw new UrlSignerConfigError(`maxTtlSeconds must be a positive integer; got ${String(maxTtlSeconds)}.`);
    }
    const now = options.now ?? Date.now;
    if (typeof now !== 'function') throw new UrlSignerConfigError('now must be a function returning milliseconds.');
    this.#secret = secret;
    this.#maxTtlSeconds = maxTtlSeconds;
    this.#now = now;
  }

  sign(claims: UrlClaims, ttlSeconds: number): SignedParams {
    const read = readClaims(claims);
    if (typeof read === 'string') throw new Error(`Cannot sign URL: ${read}.`);
    if (
      typeof ttlSeconds !== 'number' ||
      !Number.isInteger(ttlSeconds) ||
      ttlSeconds < 1 ||
      ttlSeconds > this.#maxTtlSeconds
    ) {
      throw new TtlOutOfRangeError(ttlSeconds, this.#maxTtlSeconds);
    }
    const nowMs = this.#now();
    const expires = Math.floor(nowMs / 1000) + ttlSeconds;
    const text = expiresText(expires);
    if (text === undefined) throw new Error(`Cannot sign URL: the clock returned an unusable time (${String(nowMs)}).`);
    return { expires, signature: this.#mac(read, text) };
  }

  verify(claims: UrlClaims, params: { expires: unknown; signature: unknown }): VerifyResult {
    try {
      const read = readClaims(claims);
      if (typeof read === 'string') return INVALID;
      if (typeof params !== 'object' || params === null) return INVALID;
      const { expires, signature } = params;
      const text = expiresText(expires);
      if (text === undefined) return INVALID;
      if (typeof signature !== 'string' || !SIGNATURE.test(signature)) return INVALID;

      // Compare the base64url text, not decoded bytes: 43 characters carry 258 bits, so
      // several texts decode to the same 32 bytes and only one of them is canonical.
      const expected = Buffer.from(this.#mac(read, text), 'ascii');
      const given = Buffer.from(signature, 'ascii');
      if (expected.length !== given.length || !timingSafeEqual(expected, given)) return INVALID;

      // Only past this point is anything said about time, so the expiry cannot be probed.
      const nowMs = this.#now();
      if (typeof nowMs !== 'number' || !Number.isFinite(nowMs)) return INVALID;
      const expiresMs = Number(text) * 1000;
      // No URL outlives the maximum lifetime, even one signed under a laxer configuration.
      if (expiresMs > nowMs + (this.#maxTtlSeconds + CLOCK_SLACK_SECONDS) * 1000) return INVALID;
      if (expiresMs <= nowMs) return EXPIRED;
      return OK;
    } catch {
      return INVALID;
    }
  }

  #mac(claims: UrlClaims, expires: string): string {
    const message = `${VERSION}\n${claims.operation}\n${claims.tenantId}\n${claims.artifactId}\n${expires}`;
    return createHmac('sha256', this.#secret).update(message, 'utf8').digest('base64url');
  }
}
