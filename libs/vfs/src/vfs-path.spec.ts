import { ancestorsOf, basename, isWithin, joinPath, normalizePath, parentOf, relativeTo } from './vfs-path.js';
import { VfsError } from './vfs.errors.js';

function rejection(input: string): VfsError {
  try {
    normalizePath(input);
  } catch (error) {
    return error as VfsError;
  }
  throw new Error(`expected ${JSON.stringify(input)} to be rejected`);
}

describe(normalizePath.name, () => {
  it.each([
    ['/a/b', '/a/b'],
    ['/', '/'],
    ['', '/'],
    ['a/b', '/a/b'],
    ['./a', '/a'],
    ['//a///b/./c/', '/a/b/c'],
    ['/a/../b', '/b'],
    ['/a/b/..', '/a'],
    ['/a/..', '/'],
    ['/.', '/'],
    ['foo..bar.txt', '/foo..bar.txt'],
    ['/...', '/...'],
    ['/..a/b..', '/..a/b..'],
    ['/%2e%2ex/y', '/%2e%2ex/y'],
    ['/100%.txt', '/100%.txt'],
    ['/with space/ünï©ødé.txt', '/with space/ünï©ødé.txt'],
  ])('should normalise %j to %j', (input, expected) => {
    expect(normalizePath(input)).toBe(expected);
  });

  it.each(['../../etc/passwd', '/a/../../b', '/..', '..', 'a/../..'])('should refuse %j, which climbs above the root', (input) => {
    const sut = rejection(input);
    expect(sut).toBeInstanceOf(VfsError);
    expect(sut).toMatchObject({ code: 'INVALID_PATH', status: 400 });
    expect(sut.message).toContain('climbs above the root');
  });

  it('should refuse a NUL character and say so', () => {
    const sut = rejection('/a\u0000b');
    expect(sut.code).toBe('INVALID_PATH');
    expect(sut.message).toContain('NUL');
  });

  it.each(['\u0001', '\n', '\r', '\t', '\u001f', '\u007f', '\u0080', '\u009f'])(
    'should refuse the control character %j',
    (c) => {
      expect(rejection(`/a${c}b`).code).toBe('INVALID_PATH');
    },
  );

  it('should refuse backslashes', () => {
    expect(rejection('/a\\b').code).toBe('INVALID_PATH');
    expect(rejection('..\\..\\etc').code).toBe('INVALID_PATH');
  });

  it('should refuse a name longer than 255 bytes, counting UTF-8 bytes', () => {
    expect(rejection(`/${'x'.repeat(5000)}`).message).toContain('longer than 255 bytes');
    expect(normalizePath(`/${'x'.repeat(255)}`)).toHaveLength(256);
    // 128 × 2 bytes = 256 bytes in 128 characters.
    expect(rejection(`/${'é'.repeat(128)}`).code).toBe('INVALID_PATH');
  });

  it('should refuse a path longer than 4096 bytes', () => {
    const name = 'x'.repeat(200);
    const path = Array.from({ length: 21 }, () => name).join('/');
    expect(rejection(path).message).toContain('4096');
    expect(normalizePath(Array.from({ length: 20 }, () => name).join('/'))).toHaveLength(20 * 201);
  });

  it('should normalise Unicode to NFC so both spellings are one path', () => {
    const decomposed = '/cafe\u0301.txt';
    const composed = '/caf\u00e9.txt';
    expect(normalizePath(decomposed)).toBe(composed);
    expect(normalizePath(composed)).toBe(composed);
  });

  it('should refuse lone surrogates', () => {
    expect(rejection('/a\ud800b').code).toBe('INVALID_PATH');
  });

  it('should name the path in its message', () => {
    expect(rejection('../../etc/passwd').message).toContain('"../../etc/passwd"');
  });
});

describe(isWithin.name, () => {
  it('should hold for the directory itself and what lies beneath it only', () => {
    expect(isWithin('/a/b', '/a')).toBe(true);
    expect(isWithin('/a', '/a')).toBe(true);
    expect(isWithin('/ab', '/a')).toBe(false);
    expect(isWithin('/x', '/')).toBe(true);
  });
});

describe('path helpers', () => {
  it('should give parents, names, joins, ancestors and relative paths', () => {
    expect(parentOf('/a/b')).toBe('/a');
    expect(parentOf('/a')).toBe('/');
    expect(parentOf('/')).toBe('/');
    expect(basename('/a/b.txt')).toBe('b.txt');
    expect(basename('/')).toBe('');
    expect(joinPath('/a', 'b/../c', '/d')).toBe('/a/c/d');
    expect(() => joinPath('/a', '../../x')).toThrow(VfsError);
    expect(ancestorsOf('/a/b/c')).toEqual(['/a', '/a/b']);
    expect(ancestorsOf('/a')).toEqual([]);
    expect(relativeTo('/a/b/c', '/a')).toBe('b/c');
    expect(relativeTo('/a/b', '/')).toBe('a/b');
    expect(relativeTo('/a/b', '/a/b')).toBe('b');
  });

  it('should refuse names that percent-decode to a dot segment', () => {
    for (const input of ['%2e%2e/%2e%2e/etc/passwd', '/a/%2E%2e/b', '/.%2e', '/%2e']) {
      expect(() => normalizePath(input)).toThrow(expect.objectContaining({ code: 'INVALID_PATH' }));
    }
    expect(normalizePath('/%2e%2ex')).toBe('/%2e%2ex');
    expect(normalizePath('/100%25.txt')).toBe('/100%25.txt');
  });
});
