import { globPattern } from './search-glob.js';
import { searchPattern } from './search-pattern.js';
import { lineScanner } from './text-grep.js';

describe(searchPattern.name, () => {
  it('should accept a JavaScript regex with its PostgreSQL form, or a literal', () => {
    expect(searchPattern('\\bfoo\\d+', { regex: true })).toEqual({ kind: 'regex', source: '\\bfoo\\d+', postgres: '\\yfoo\\d+', caseInsensitive: false });
    expect(searchPattern('a.b', { caseInsensitive: true })).toEqual({ kind: 'literal', pattern: 'a.b', caseInsensitive: true });
  });

  it.each([
    ['', {}, /empty/],
    ['a\u0000b', {}, /NUL/],
    ['a\nb', {}, /one line/],
    ['(', { regex: true }, /Invalid pattern/],
    ['(x)\\1', { regex: true }, /backreferences/],
    ['a{300}', { regex: true }, /repetition counts over 255/],
  ])('should refuse %j with INVALID_PATTERN', (pattern, options, message) => {
    expect(() => searchPattern(pattern, options)).toThrow(message);
  });
});

describe(lineScanner.name, () => {
  it('should stop a regex past its budget with SEARCH_TIMEOUT instead of holding the event loop', () => {
    const sut = lineScanner(searchPattern('^(a+)+$', { regex: true }), 30);
    const started = Date.now();
    expect(() => sut([`${'a'.repeat(5000)}!`], 1)).toThrow(expect.objectContaining({ code: 'SEARCH_TIMEOUT' }));
    expect(Date.now() - started).toBeLessThan(2_000);
  });

  it('should find literal and regex lines up to the limit', () => {
    expect(lineScanner(searchPattern('b'))(['ab', 'c', 'b'], 5)).toEqual([0, 2]);
    expect(lineScanner(searchPattern('^B', { regex: true, caseInsensitive: true }))(['ab', 'bc', 'b'], 1)).toEqual([1]);
  });
});

describe('an over-long pattern', () => {
  it('should be refused with its start quoted whole, never half an emoji', () => {
    // 10,001 UTF-16 units; the message quotes about 80, and unit 80 is half an emoji.
    const pattern = `x${'😀'.repeat(5000)}`;
    for (const refuse of [() => searchPattern(pattern), () => globPattern(pattern)]) {
      let message = '';
      try {
        refuse();
      } catch (error) {
        message = (error as Error).message;
      }
      expect(message).toBe(`Invalid pattern ${JSON.stringify(`x${'😀'.repeat(39)}`)}: it is too long.`);
    }
  });
});
