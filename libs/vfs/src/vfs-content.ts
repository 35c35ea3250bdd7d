import { createHash } from 'node:crypto';
import { isUtf8 } from 'node:buffer';
import type { FileBody } from './thread-files.repository.js';
import { basename } from './vfs-path.js';

export const TEXT_DEFAULT_TYPE = 'text/plain; charset=utf-8';
export const BINARY_DEFAULT_TYPE = 'application/octet-stream';

// The common types by extension; anything else is text/plain or octet-stream.
const TYPES: Record<string, string> = {
  txt: 'text/plain', log: 'text/plain', md: 'text/markdown', markdown: 'text/markdown',
  csv: 'text/csv', tsv: 'text/tab-separated-values', html: 'text/html', htm: 'text/html',
  css: 'text/css', js: 'text/javascript', mjs: 'text/javascript', cjs: 'text/javascript',
  ts: 'text/x-typescript', tsx: 'text/x-typescript', jsx: 'text/javascript',
  py: 'text/x-python', r: 'text/x-r', sh: 'text/x-shellscript', sql: 'application/sql',
  json: 'application/json', jsonl: 'application/x-ndjson', ndjson: 'application/x-ndjson',
  ipynb: 'application/x-ipynb+json', geojson: 'application/geo+json',
  xml: 'application/xml', yaml: 'application/yaml', yml: 'application/yaml',
  toml: 'application/toml', ini: 'text/plain', cfg: 'text/plain', tex: 'application/x-tex',
  svg: 'image/svg+xml', png: 'image/png', jpg: 'image/jpeg', jpeg: 'image/jpeg',
  gif: 'image/gif', webp: 'image/webp', bmp: 'image/bmp', ico: 'image/vnd.microsoft.icon',
  tif: 'image/tiff', tiff: 'image/tiff', pdf: 'application/pdf',
  zip: 'application/zip', gz: 'application/gzip', tgz: 'application/gzip',
  tar: 'application/x-tar', bz2: 'application/x-bzip2', xz: 'application/x-xz',
  '7z': 'application/x-7z-compressed', parquet: 'application/vnd.apache.parquet',
  xls: 'application/vnd.ms-excel',
  xlsx: 'application/vnd.openxmlformats-officedocument.spreadsheetml.sheet',
  docx: 'application/vnd.openxmlformats-officedocument.wordprocessingml.document',
  pptx: 'application/vnd.openxmlformats-officedocument.presentationml.presentation',
  wav: 'audio/wav', mp3: 'audio/mpeg', ogg: 'audio/ogg', mp4: 'video/mp4', webm: 'video/webm',
  woff: 'font/woff', woff2: 'font/woff2', ttf: 'font/ttf', wasm: 'application/wasm',
};

// A `type/subtype` with optional parameters; anything else from a caller is ignored.
const MEDIA_TYPE = /^[A-Za-z0-9][\w!#$&^.+-]*\/[\w!#$&^.+-]+(\s*;[^\u0000-\u001f\u007f]*)?$/;

export function guessContentType(path: string, text: boolean): string {
  const name = basename(path);
  const dot = name.lastIndexOf('.');
  const type = dot > 0 ? TYPES[name.slice(dot + 1).toLowerCase()] : undefined;
  if (!type) return text ? TEXT_DEFAULT_TYPE : BINARY_DEFAULT_TYPE;
  return text && type.startsWith('text/') ? `${type}; charset=utf-8` : type;
}

function contentType(path: string, text: boolean, declared: string | undefined): string {
  const trimmed = declared?.trim();
  return trimmed && trimmed.length <= 255 && MEDIA_TYPE.test(trimmed) ? trimmed : guessContentType(path, text);
}

// What gets stored for `content`: UTF-8 without NUL is text (searchable, editable),
// anything else is bytes. A string is judged by its UTF-8 encoding like a Buffer (a lone
// surrogate has none: it is stored as U+FFFD, as Buffer.from writes it). Text goes to
// the store as those UTF-8 bytes (FileBody).
export function fileBody(path: string, content: string | Buffer, declaredType?: string): FileBody {
  let text: Buffer | null;
  let bytes: Buffer;
  if (typeof content === 'string') {
    bytes = Buffer.from(content, 'utf8');
    text = content.includes('\u0000') ? null : bytes;
  } else {
    bytes = content;
    text = isUtf8(content) && !content.includes(0) ? content : null;
  }
  return {
    path,
    text,
    bytes: text === null ? bytes : null,
    contentType: contentType(path, text !== null, declaredType),
    size: bytes.length,
    sha256: createHash('sha256').update(bytes).digest('hex'),
  };
}
