import { compileRegex, toPostgresRegex } from './vfs-regex.js';

describe(toPostgresRegex.name, () => {
  it.each([
    ['def \\w+\\(', 'def \\w+\\('],
    ['^\\s*import', '^\\s*import'],
    ['\\bfoo\\b', '\\yfoo\\y'],
    ['\\Bfoo', '\\Yfoo'],
    ['[\\b]', '[\\b]'],
    ['(?<year>\\d{4})-\\d{2}', '(\\d{4})-\\d{2}'],
    ['(?<=a)b(?!c)', '(?<=a)b(?!c)'],
    ['a{2,}b{1,3}?', 'a{2,}b{1,3}?'],
    ['a{b}', 'a\\{b\\}'],
    ['\\x41\\u0042', '\\u0041\\u0042'],
    ['\\m\\y', 'my'],
    ['[[:alpha:]]', '[\\[:alpha:]\\]'],
    ['a/b\\/c\\.d', 'a/b\\/c\\.d'],
  ])('should translate %j to %j', (js, are) => {
    expect(toPostgresRegex(js)).toBe(are);
  });

  it.each(['(a)\\1', '[]', '[^]', '\\k<x>', 'a{300}', '[\\D]', '\\c1'])(
    'should give up on %j, which has no faithful ARE form',
    (js) => {
      expect(toPostgresRegex(js)).toBeNull();
    },
  );
});

describe(compileRegex.name, () => {
  it('should refuse an invalid regex with INVALID_PATTERN', () => {
    expect(() => compileRegex('(', false)).toThrow(expect.objectContaining({ code: 'INVALID_PATTERN', status: 400 }));
  });

  it('should honour case-insensitivity', () => {
    expect(compileRegex('abc', true).test('ABC')).toBe(true);
  });
});
