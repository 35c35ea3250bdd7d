import { canonicalJson } from './canonical-json.js';

describe(canonicalJson.name, () => {
  it('should sort keys at every depth and drop whitespace', () => {
    const sut = canonicalJson({ b: 1, a: { d: [3, { z: null, y: true }], c: 'x' } });
    expect(sut).toBe('{"a":{"c":"x","d":[3,{"y":true,"z":null}]},"b":1}');
  });

  it('should give the same text whatever the key order', () => {
    expect(canonicalJson({ x: 1, y: [1, 2], '\u00e9': 'é', A: 0 })).toBe(canonicalJson({ A: 0, '\u00e9': 'é', y: [1, 2], x: 1 }));
  });

  it('should keep array order and escape strings as JSON does', () => {
    expect(canonicalJson(['b', 'a', 'quote " back \\ nl \n'])).toBe('["b","a","quote \\" back \\\\ nl \\n"]');
  });

  it('should omit undefined members as JSON.stringify does', () => {
    expect(canonicalJson({ a: undefined, b: 2 })).toBe('{"b":2}');
  });

  it.each([NaN, Infinity, new Date(0), new Map(), () => 1, 1n])('should refuse %p, which has no canonical JSON', (value) => {
    expect(() => canonicalJson({ value })).toThrow(TypeError);
  });
});
