import { MAX_JSON_DEPTH, nestsDeeperThan } from './json-depth.js';

const nested = (depth: number) => '{"a":['.repeat(depth / 2) + '1' + ']}'.repeat(depth / 2);

describe(nestsDeeperThan.name, () => {
  it.each([
    ['a string', (text: string) => text],
    ['UTF-8 bytes', (text: string) => Buffer.from(text)],
  ])('should count the nesting of objects and arrays in %s', (_name, as) => {
    expect(nestsDeeperThan(as(nested(MAX_JSON_DEPTH)))).toBe(false);
    expect(nestsDeeperThan(as(nested(MAX_JSON_DEPTH + 2)))).toBe(true);
    expect(nestsDeeperThan(as('['.repeat(10_000) + ']'.repeat(10_000)))).toBe(true);
    // Siblings do not add up: depth is how many are open at once.
    expect(nestsDeeperThan(as(JSON.stringify(Array.from({ length: 1000 }, () => ({ a: [[1]] })))), 4)).toBe(false);
    expect(nestsDeeperThan(as('[[[[]]]]'), 3)).toBe(true);
  });

  it.each([
    ['a string', (text: string) => text],
    ['UTF-8 bytes', (text: string) => Buffer.from(text)],
  ])('should not count brackets inside strings, escaped quotes included, in %s', (_name, as) => {
    const text = JSON.stringify({ code: '['.repeat(500) + '"\\"' + '{'.repeat(500), 'é[[[': '\\', b: ['"[[[["'] });
    expect(nestsDeeperThan(as(text), 2)).toBe(false);
    expect(nestsDeeperThan(as('["\\\\", [[[]]]]'), 3)).toBe(true);
    // An unterminated string ends the text.
    expect(nestsDeeperThan(as('["[[[[[[[[['), 1)).toBe(false);
  });
});
