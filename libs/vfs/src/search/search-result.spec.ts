import { shownLine } from './search-result.js';

describe('shownLine', () => {
  it('should show a line without its \\r, whole up to 2,000 characters', () => {
    expect(shownLine('x = 1\r')).toBe('x = 1');
    expect(shownLine('y'.repeat(2000))).toBe('y'.repeat(2000));
    expect(shownLine('y'.repeat(2001))).toBe(`${'y'.repeat(2000)}…`);
  });

  it('should never cut an emoji in half when it cuts a long line', () => {
    // Emoji are two UTF-16 units: after one "x", unit 2,000 is the first half of one.
    const odd = shownLine(`x${'😀'.repeat(1500)}`);
    expect(odd).toBe(`x${'😀'.repeat(999)}…`);
    // No lone half: JSON would send it as an escaped surrogate, not text.
    expect(/[\ud800-\udbff](?![\udc00-\udfff])/.test(odd)).toBe(false);
    expect(JSON.stringify(odd)).not.toMatch(/\\ud83d/);
    // Aligned, the cut falls between two emoji and keeps 2,000 units.
    expect(shownLine('😀'.repeat(1500))).toBe(`${'😀'.repeat(1000)}…`);
  });
});
