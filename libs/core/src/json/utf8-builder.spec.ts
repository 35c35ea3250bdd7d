import { Utf8Builder } from './utf8-builder.js';

describe('Utf8Builder', () => {
  it('should give back exactly the UTF-8 of the strings written, across many chunks', () => {
    const b = new Utf8Builder(4);
    const pieces = ['{"a":', '"é€𝄞"', ',', 'x'.repeat(1000), '', '\u{1f600}', '}'];
    for (const p of pieces) b.write(p);
    const expected = Buffer.from(pieces.join(''), 'utf8');
    expect(b.byteLength).toBe(expected.length);
    expect(b.bytes().equals(expected)).toBe(true);
  });

  it('should keep a piece larger than a chunk whole, in a chunk of its own', () => {
    const b = new Utf8Builder(8);
    b.write('ab');
    b.write('c'.repeat(100));
    b.write('d');
    expect(b.byteLength).toBe(103);
    expect(b.bytes().toString('utf8')).toBe(`ab${'c'.repeat(100)}d`);
  });

  it('should answer no bytes before anything is written', () => {
    expect(new Utf8Builder().bytes().length).toBe(0);
  });
});
