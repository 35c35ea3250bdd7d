import { TtlOutOfRangeError, UrlSigner, UrlSignerConfigError, type UrlClaims } from './url-signer.js';

const SECRET = 'a'.repeat(16) + 'b'.repeat(16);
const OTHER_SECRET = 'c'.repeat(40);
const START_MS = Date.UTC(2030, 0, 1);
const MAX_TTL = 3600;

const claims: UrlClaims = { artifactId: 'art_123', tenantId: 'ten_456', operation: 'download' };

function clock(startMs = START_MS) {
  let nowMs = startMs;
  return {
    now: () => nowMs,
    advance: (seconds: number) => {
      nowMs += seconds * 1000;
    },
  };
}

function setup(options: { maxTtlSeconds?: number; secret?: string } = {}) {
  const time = clock();
  const sut = new UrlSigner(options.secret ?? SECRET, { maxTtlSeconds: options.maxTtlSeconds ?? MAX_TTL, now: time.now });
  return { sut, time };
}

// Replaces one character of a base64url signature by another valid one.
function flipChar(signature: string, index: number): string {
  const replacement = signature[index] === 'A' ? 'B' : 'A';
  return signature.slice(0, index) + replacement + signature.slice(index + 1);
}

describe(UrlSigner.name, () => {
  describe('sign', () => {
    it('should produce an expiry ttl seconds from now and a 43-character base64url signature', () => {
      const { sut } = setup();
      const params = sut.sign(claims, 600);
      expect(params.expires).toBe(START_MS / 1000 + 600);
      expect(params.signature).toMatch(/^[A-Za-z0-9_-]{43}$/);
    });

    it('should be deterministic for the same claims, expiry and secret', () => {
      const { sut } = setup();
      expect(sut.sign(claims, 600)).toEqual(sut.sign(claims, 600));
    });

    it.each([0, -1, -3600, 1.5, 0.5, MAX_TTL + 1, Number.NaN, Number.POSITIVE_INFINITY])(
      'should refuse a ttl of %p with TtlOutOfRangeError carrying the max',
      (ttl) => {
        const { sut } = setup();
        let caught: unknown;
        try {
          sut.sign(claims, ttl);
        } catch (error) {
          caught = error;
        }
        expect(caught).toBeInstanceOf(TtlOutOfRangeError);
        expect(caught).toMatchObject({ maxTtlSeconds: MAX_TTL });
        expect((caught as TtlOutOfRangeError).ttlSeconds).toBe(ttl);
        expect((caught as Error).message).toContain(String(MAX_TTL));
      },
    );

    it.each([1, MAX_TTL])('should accept a ttl of %p at the edge of the range', (ttl) => {
      const { sut } = setup();
      expect(sut.verify(claims, sut.sign(claims, ttl))).toEqual({ ok: true });
    });

    it.each([
      ['artifactId', { ...claims, artifactId: 'a\nb' }],
      ['tenantId', { ...claims, tenantId: 't\n' }],
      ['operation', { ...claims, operation: 'download\n' as 'download' }],
    ])('should refuse to sign claims whose %s contains a newline', (_name, bad) => {
      const { sut } = setup();
      expect(() => sut.sign(bad, 60)).toThrow(/newline/);
    });

    it('should refuse to sign empty claims or an unknown operation', () => {
      const { sut } = setup();
      expect(() => sut.sign({ ...claims, artifactId: '' }, 60)).toThrow(Error);
      expect(() => sut.sign({ ...claims, operation: 'upload' as 'download' }, 60)).toThrow(Error);
    });
  });

  describe('constructor', () => {
    it.each([
      ['missing', undefined],
      ['empty', ''],
      ['31 characters long', 'x'.repeat(31)],
      ['not a string', 12345678901234567890123456789012345],
    ])('should refuse a secret that is %s', (_label, secret) => {
      expect(() => new UrlSigner(secret as string, { maxTtlSeconds: MAX_TTL })).toThrow(UrlSignerConfigError);
    });

    it('should accept a secret of exactly 32 characters', () => {
      expect(() => new UrlSigner('x'.repeat(32), { maxTtlSeconds: MAX_TTL })).not.toThrow();
    });

    it.each([0, -1, 1.5, Number.NaN, Number.POSITIVE_INFINITY, '60', undefined])(
      'should refuse a maxTtlSeconds of %p',
      (maxTtlSeconds) => {
        expect(() => new UrlSigner(SECRET, { maxTtlSeconds: maxTtlSeconds as number })).toThrow(UrlSignerConfigError);
      },
    );

    it('should default the clock to Date.now', () => {
      const sut = new UrlSigner(SECRET, { maxTtlSeconds: MAX_TTL });
      const before = Math.floor(Date.now() / 1000);
      const params = sut.sign(claims, 60);
      expect(params.expires).toBeGreaterThanOrEqual(before + 60);
      expect(params.expires).toBeLessThanOrEqual(Math.floor(Date.now() / 1000) + 60);
      expect(sut.verify(claims, params)).toEqual({ ok: true });
    });
  });

  describe('verify', () => {
    it('should accept what it signed', () => {
      const { sut } = setup();
      const params = sut.sign(claims, 600);
      expect(sut.verify(claims, params)).toEqual({ ok: true });
    });

    it('should accept expires and signature as query-string text', () => {
      const { sut } = setup();
      const { expires, signature } = sut.sign(claims, 600);
      expect(sut.verify(claims, { expires: String(expires), signature })).toEqual({ ok: true });
    });

    it.each([
      ['artifactId', { ...claims, artifactId: 'art_124' }],
      ['tenantId', { ...claims, tenantId: 'ten_457' }],
      ['operation', { ...claims, operation: 'upload' as 'download' }],
      ['artifactId and tenantId swapped', { ...claims, artifactId: claims.tenantId, tenantId: claims.artifactId }],
    ])('should reject a tampered %s', (_name, tampered) => {
      const { sut } = setup();
      const params = sut.sign(claims, 600);
      expect(sut.verify(tampered, params)).toEqual({ ok: false, reason: 'invalid' });
    });

    it.each([1, -1, 600, -599])('should reject an expiry moved by %p seconds', (delta) => {
      const { sut } = setup();
      const { expires, signature } = sut.sign(claims, 600);
      expect(sut.verify(claims, { expires: expires + delta, signature })).toEqual({ ok: false, reason: 'invalid' });
    });

    it('should reject an expiry written with a leading zero', () => {
      const { sut } = setup();
      const { expires, signature } = sut.sign(claims, 600);
      expect(sut.verify(claims, { expires: `0${expires}`, signature })).toEqual({ ok: false, reason: 'invalid' });
    });

    it('should reject a signature with any single character changed', () => {
      const { sut } = setup();
      const params = sut.sign(claims, 600);
      for (let index = 0; index < params.signature.length; index++) {
        const signature = flipChar(params.signature, index);
        expect(sut.verify(claims, { ...params, signature })).toEqual({ ok: false, reason: 'invalid' });
      }
    });

    it('should reject a non-canonical last character that decodes to the same bytes', () => {
      const { sut } = setup();
      const params = sut.sign(claims, 600);
      const alphabet = 'ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_';
      const last = alphabet.indexOf(params.signature[42]!);
      const sibling = alphabet[last ^ 1]!; // differs only in the 2 unused low bits
      const signature = params.signature.slice(0, 42) + sibling;
      expect(Buffer.from(signature, 'base64url')).toEqual(Buffer.from(params.signature, 'base64url'));
      expect(sut.verify(claims, { ...params, signature })).toEqual({ ok: false, reason: 'invalid' });
    });

    it.each([
      ['truncated by one character', (s: string) => s.slice(0, 42)],
      ['truncated to half', (s: string) => s.slice(0, 21)],
      ['empty', () => ''],
      ['extended by one character', (s: string) => `${s}A`],
      ['with base64 padding', (s: string) => `${s}=`],
      ['in standard base64 (+ and /)', (s: string) => `${s.slice(0, 41)}+/`],
      ['with a non-base64 character', (s: string) => `${s.slice(0, 42)}!`],
      ['with surrounding whitespace', (s: string) => ` ${s}`],
      ['in hex', (s: string) => Buffer.from(s, 'base64url').toString('hex')],
    ])('should reject a signature %s without throwing', (_label, mangle) => {
      const { sut } = setup();
      const { expires, signature } = sut.sign(claims, 600);
      expect(sut.verify(claims, { expires, signature: mangle(signature) })).toEqual({ ok: false, reason: 'invalid' });
    });

    it.each([
      '1e10',
      '-5',
      '+5',
      ' 123',
      '123 ',
      '',
      '12.5',
      '0x10',
      '1234567890123',
      '１２３',
      undefined,
      null,
      [1893456600],
      ['1893456600'],
      { valueOf: () => 1893456600 },
      -5,
      1.5,
      Number.NaN,
      Number.POSITIVE_INFINITY,
      1e21,
      BigInt(1893456600),
      true,
    ])('should reject an expires of %p as invalid', (expires) => {
      const { sut } = setup();
      const { signature } = sut.sign(claims, 600);
      expect(sut.verify(claims, { expires, signature })).toEqual({ ok: false, reason: 'invalid' });
    });

    it('should report expired once the clock reaches the expiry, and not before', () => {
      const { sut, time } = setup();
      const params = sut.sign(claims, 600);
      time.advance(599);
      expect(sut.verify(claims, params)).toEqual({ ok: true });
      time.advance(1);
      expect(sut.verify(claims, params)).toEqual({ ok: false, reason: 'expired' });
      time.advance(86_400);
      expect(sut.verify(claims, params)).toEqual({ ok: false, reason: 'expired' });
    });

    it('should report a tampered expired URL as invalid, not expired', () => {
      const { sut, time } = setup();
      const params = sut.sign(claims, 600);
      time.advance(3600);
      expect(sut.verify({ ...claims, artifactId: 'other' }, params)).toEqual({ ok: false, reason: 'invalid' });
      expect(sut.verify(claims, { ...params, signature: flipChar(params.signature, 0) })).toEqual({
        ok: false,
        reason: 'invalid',
      });
    });

    it('should reject URLs signed with another secret (revocation by rotation)', () => {
      const { sut: old } = setup();
      const { sut: rotated } = setup({ secret: OTHER_SECRET });
      const params = old.sign(claims, 600);
      expect(old.verify(claims, params)).toEqual({ ok: true });
      expect(rotated.verify(claims, params)).toEqual({ ok: false, reason: 'invalid' });
    });

    it('should reject a validly signed expiry further out than the max ttl plus clock slack', () => {
      const time = clock();
      const lax = new UrlSigner(SECRET, { maxTtlSeconds: 10 * MAX_TTL, now: time.now });
      const strict = new UrlSigner(SECRET, { maxTtlSeconds: MAX_TTL, now: time.now });

      const farFuture = lax.sign(claims, MAX_TTL + 61);
      expect(lax.verify(claims, farFuture)).toEqual({ ok: true });
      expect(strict.verify(claims, farFuture)).toEqual({ ok: false, reason: 'invalid' });

      const withinSlack = lax.sign(claims, MAX_TTL + 60);
      expect(strict.verify(claims, withinSlack)).toEqual({ ok: true });
    });

    it.each([
      ['artifactId', { ...claims, artifactId: 'a\nb' }],
      ['tenantId', { ...claims, tenantId: 'ten_456\n' }],
    ])('should treat claims whose %s contains a newline as invalid', (_name, bad) => {
      const { sut } = setup();
      const params = sut.sign(claims, 600);
      expect(sut.verify(bad, params)).toEqual({ ok: false, reason: 'invalid' });
    });

    it('should not let a newline shift a value from one claim into another', () => {
      const { sut } = setup();
      const params = sut.sign({ ...claims, tenantId: 't', artifactId: 'x' }, 600);
      expect(sut.verify({ ...claims, tenantId: 't\nx', artifactId: '' }, params)).toEqual({ ok: false, reason: 'invalid' });
    });

    it('should reject different lone surrogates, which UTF-8 would encode alike', () => {
      const { sut } = setup();
      expect(() => sut.sign({ ...claims, artifactId: 'id\ud800' }, 600)).toThrow(/Unicode/);
      const params = sut.sign({ ...claims, artifactId: 'id\ufffd' }, 600);
      expect(sut.verify({ ...claims, artifactId: 'id\ud800' }, params)).toEqual({ ok: false, reason: 'invalid' });
    });

    it('should return invalid rather than throw when the clock misbehaves', () => {
      let nowMs: number = START_MS;
      const sut = new UrlSigner(SECRET, { maxTtlSeconds: MAX_TTL, now: () => nowMs });
      const params = sut.sign(claims, 600);
      nowMs = Number.NaN;
      expect(sut.verify(claims, params)).toEqual({ ok: false, reason: 'invalid' });
      const throwing = new UrlSigner(SECRET, {
        maxTtlSeconds: MAX_TTL,
        now: () => {
          throw new Error('clock broke');
        },
      });
      expect(throwing.verify(claims, params)).toEqual({ ok: false, reason: 'invalid' });
    });

    it('should never throw, whatever it is given', () => {
      const { sut } = setup();
      const good = sut.sign(claims, 600);
      const hostile = {
        get artifactId(): string {
          throw new Error('boom');
        },
        tenantId: 't',
        operation: 'download',
      };
      const weird: unknown[] = [
        undefined,
        null,
        0,
        -1,
        1.5,
        Number.NaN,
        Number.NEGATIVE_INFINITY,
        '',
        ' ',
        '=',
        'A'.repeat(42),
        'A'.repeat(44),
        '='.repeat(43),
        'x'.repeat(10_000_000),
        '9'.repeat(1_000_000),
        '\u0000'.repeat(43),
        'é'.repeat(43),
        '\ud800'.repeat(43),
        [],
        [good.signature],
        {},
        { toString: () => good.signature },
        () => good.signature,
        Symbol('s'),
        BigInt(1),
        true,
        Buffer.from(good.signature),
        new Date(),
        good.signature,
        good.expires,
        String(good.expires),
      ];
      const weirdClaims: unknown[] = [
        undefined,
        null,
        {},
        [],
        'download',
        42,
        hostile,
        { artifactId: 1, tenantId: 2, operation: 3 },
        { ...claims, artifactId: 'x'.repeat(1_000_000) },
        claims,
      ];
      for (const c of weirdClaims) {
        for (const expires of weird) {
          for (const signature of weird) {
            const result = sut.verify(c as UrlClaims, { expires, signature });
            const genuine =
              c === claims && (expires === good.expires || expires === String(good.expires)) && signature === good.signature;
            expect(result).toEqual(genuine ? { ok: true } : { ok: false, reason: 'invalid' });
          }
        }
        expect(sut.verify(c as UrlClaims, undefined as never)).toEqual({ ok: false, reason: 'invalid' });
        expect(sut.verify(c as UrlClaims, null as never)).toEqual({ ok: false, reason: 'invalid' });
        expect(sut.verify(c as UrlClaims, 'expires=1&signature=2' as never)).toEqual({ ok: false, reason: 'invalid' });
      }
    });
  });
});
