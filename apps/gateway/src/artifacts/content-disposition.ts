// attachment; filename="plot.png"; filename*=UTF-8''plot.png (RFC 6266). The plain form
// keeps quotes, backslashes and control characters out; the extended form (RFC 8187)
// may carry only attr-char and %XX, and encodeURIComponent leaves ' ( ) * as they are.
export function contentDisposition(name: string): string {
  const plain = name.replace(/[^\x20-\x7e]|["\\]/g, '_');
  const extended = encodeURIComponent(name).replace(/['()*]/g, (c) => `%${c.charCodeAt(0).toString(16).toUpperCase()}`);
  return `attachment; filename="${plain}"; filename*=UTF-8''${extended}`;
}
