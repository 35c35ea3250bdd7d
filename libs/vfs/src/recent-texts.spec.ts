import { RecentTexts } from './recent-texts.js';

describe(RecentTexts.name, () => {
  const text = (n: number, c = 'x') => c.repeat(n);

  it('should give back a kept text only for its tenant, thread, path and sha256', () => {
    const sut = new RecentTexts(10, 1000);
    sut.keep('ten_a', 't1', '/big.md', 'sha-1', text(100), 100);
    expect(sut.sha256Of('ten_a', 't1', '/big.md')).toBe('sha-1');
    expect(sut.take('ten_a', 't1', '/big.md', 'sha-1')).toBe(text(100));
    // Changed since (another sha256), or another tenant, thread or path: nothing.
    expect(sut.take('ten_a', 't1', '/big.md', 'sha-2')).toBeNull();
    expect(sut.take('ten_b', 't1', '/big.md', 'sha-1')).toBeNull();
    expect(sut.take('ten_a', 't2', '/big.md', 'sha-1')).toBeNull();
    expect(sut.take('ten_a', 't1', '/other.md', 'sha-1')).toBeNull();
    expect(sut.sha256Of('ten_b', 't1', '/big.md')).toBeNull();
  });

  it('should not keep small texts or one larger than the whole budget, and replace what a path held', () => {
    const sut = new RecentTexts(10, 1000);
    sut.keep('ten_a', 't1', '/small.md', 'sha-s', text(9), 9);
    sut.keep('ten_a', 't1', '/huge.md', 'sha-h', text(1001), 1001);
    expect(sut.size).toEqual({ entries: 0, bytes: 0 });
    sut.keep('ten_a', 't1', '/big.md', 'sha-1', text(100), 100);
    sut.keep('ten_a', 't1', '/big.md', 'sha-2', text(200, 'y'), 200);
    expect(sut.size).toEqual({ entries: 1, bytes: 200 });
    expect(sut.take('ten_a', 't1', '/big.md', 'sha-1')).toBeNull();
    expect(sut.take('ten_a', 't1', '/big.md', 'sha-2')).toBe(text(200, 'y'));
    // Rewritten small: the old text is let go.
    sut.keep('ten_a', 't1', '/big.md', 'sha-3', text(5), 5);
    expect(sut.size).toEqual({ entries: 0, bytes: 0 });
  });

  it('should let the least recently used texts go first once over its budget', () => {
    const sut = new RecentTexts(10, 1000);
    sut.keep('ten_a', 't1', '/a', 'a', text(400), 400);
    sut.keep('ten_a', 't1', '/b', 'b', text(400), 400);
    expect(sut.take('ten_a', 't1', '/a', 'a')).not.toBeNull(); // /a is now the most recent
    sut.keep('ten_a', 't1', '/c', 'c', text(400), 400);
    expect(sut.sha256Of('ten_a', 't1', '/b')).toBeNull();
    expect(sut.sha256Of('ten_a', 't1', '/a')).toBe('a');
    expect(sut.sha256Of('ten_a', 't1', '/c')).toBe('c');
    expect(sut.size).toEqual({ entries: 2, bytes: 800 });
  });
});
