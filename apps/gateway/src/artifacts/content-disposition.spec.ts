import { contentDisposition } from './content-disposition.js';

// RFC 8187 section 3.2.1, strictly: ext-value = charset "'" [ language ] "'" value-chars,
// value-chars = *( pct-encoded / attr-char ). Anything else is not an ext-value.
const ATTR_CHAR = "[A-Za-z0-9!#$&+\\-.^_`|~]";
const EXT_VALUE = new RegExp(`^UTF-8'[A-Za-z0-9-]*'((?:%[0-9A-Fa-f]{2}|${ATTR_CHAR})*)$`);

function strictFilenameStar(header: string): string | null {
  const match = /^attachment; filename="(?:[^"\\]|\\.)*"; filename\*=([^;\s]*)$/.exec(header);
  if (!match) return null;
  const ext = EXT_VALUE.exec(match[1]!);
  return ext ? decodeURIComponent(ext[1]!) : null;
}

describe('contentDisposition', () => {
  it.each(["plot (1).png", "it's*.txt", 'résumé (final)*.pdf', 'quote"back\\slash.txt', '日本語 100%.csv', 'a;b,c=d.txt'])(
    'should give a filename* that a strict RFC 8187 decoder reads back as %p',
    (name) => {
      expect(strictFilenameStar(contentDisposition(name))).toBe(name);
    },
  );

  it('should keep the plain filename a quoted ASCII string', () => {
    expect(contentDisposition('plot (1).png')).toMatch(/^attachment; filename="plot \(1\)\.png"; /);
    expect(contentDisposition('é"\\.png')).toMatch(/^attachment; filename="___\.png"; /);
  });
});
