import { fileTypeFromBuffer } from 'file-type';
import mime from 'mime-types';

// How many leading bytes the type is sniffed from (file-type's recommended sample).
export const SNIFF_BYTES = 4100;

// The MIME type of an artifact: the content's signature when it has one (a PNG named
// `.txt` is a PNG), else the extension (mime-types, the mime-db database), else text or
// binary by looking at the first bytes. Text types get `; charset=utf-8`, as served.
export async function detectMime(name: string, head: Buffer): Promise<string> {
  const sniffed = head.length > 0 ? await fileTypeFromBuffer(head).catch(() => undefined) : undefined;
  if (sniffed) return sniffed.mime;
  const byName = mime.lookup(name);
  if (byName) return byName;
  return looksLikeText(head) ? 'text/plain' : 'application/octet-stream';
}

// Valid UTF-8 without NUL in the sample (a multi-byte character cut at the end of the
// sample is allowed).
function looksLikeText(head: Buffer): boolean {
  if (head.includes(0)) return false;
  try {
    new TextDecoder('utf-8', { fatal: true }).decode(head.subarray(0, trimPartial(head)));
    return true;
  } catch {
    return false;
  }
}

function trimPartial(buf: Buffer): number {
  let end = buf.length;
  for (let i = 1; i <= 3 && end - i >= 0; i++) {
    const byte = buf[end - i]!;
    if ((byte & 0xc0) === 0xc0) return end - i; // a lead byte whose sequence is cut
    if ((byte & 0xc0) !== 0x80) break;
  }
  return end;
}
