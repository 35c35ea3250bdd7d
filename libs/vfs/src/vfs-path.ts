import { VfsError } from './vfs.errors.js';

const ENCODED_DOT_SEGMENT = /^(?:\.|%2e){1,2}$/i;

export const MAX_NAME_BYTES = 255;
export const MAX_PATH_BYTES = 4096;
// Raw input is refused before any work past this (normalised paths are far shorter).
const MAX_INPUT_CHARS = 8 * MAX_PATH_BYTES;

// C0 controls (NUL included), DEL and C1 controls.
const CONTROL = /[\u0000-\u001f\u007f-\u009f]/;
const LONE_SURROGATE = /[\ud800-\udbff](?![\udc00-\udfff])|(?<![\ud800-\udbff])[\udc00-\udfff]/;

// The one normaliser every entry point of the filesystem uses. Returns the absolute
// POSIX form: `/a/b`, root `/`. Relative input is taken from `/`; `.`, empty components
// and a trailing slash disappear; `..` is resolved but may not climb above `/`. NUL,
// control characters and backslashes are refused, names are NFC and at most 255 UTF-8
// bytes, the whole path at most 4096. `%` is an ordinary character (no URL decoding).
export function normalizePath(input: string): string {
  if (typeof input !== 'string') throw VfsError.invalidPath(String(input), 'a path must be a string');
  if (input.length > MAX_INPUT_CHARS) {
    throw VfsError.invalidPath(`${input.slice(0, 64)}…`, `it is longer than ${MAX_PATH_BYTES} bytes`);
  }
  if (LONE_SURROGATE.test(input)) throw VfsError.invalidPath(input, 'it is not valid Unicode');
  const nfc = input.normalize('NFC');
  const control = CONTROL.exec(nfc);
  if (control) {
    const code = control[0].charCodeAt(0);
    throw VfsError.invalidPath(
      input,
      code === 0
        ? 'it contains a NUL character'
        : `it contains the control character U+${code.toString(16).toUpperCase().padStart(4, '0')}`,
    );
  }
  if (nfc.includes('\\')) throw VfsError.invalidPath(input, 'backslashes are not allowed; use / between names');

  const names: string[] = [];
  for (const name of nfc.split('/')) {
    if (name === '' || name === '.') continue;
    if (name === '..') {
      if (names.length === 0) throw VfsError.invalidPath(input, 'it climbs above the root directory (/)');
      names.pop();
      continue;
    }
    // A name that percent-decodes to a dot segment (`%2e%2e`, `.%2E`) is refused: any
    // layer that decodes it later (a URL, a tool, the container) would see `..`.
    if (ENCODED_DOT_SEGMENT.test(name)) {
      throw VfsError.invalidPath(input, 'a name may not be a percent-encoded "." or ".."');
    }
    if (Buffer.byteLength(name, 'utf8') > MAX_NAME_BYTES) {
      throw VfsError.invalidPath(
        input.length > 80 ? `${input.slice(0, 80)}…` : input,
        `the name ${JSON.stringify(name.length > 40 ? `${name.slice(0, 40)}…` : name)} is longer than ${MAX_NAME_BYTES} bytes`,
      );
    }
    names.push(name);
  }
  const path = `/${names.join('/')}`;
  if (Buffer.byteLength(path, 'utf8') > MAX_PATH_BYTES) {
    throw VfsError.invalidPath(`${path.slice(0, 80)}…`, `it is longer than ${MAX_PATH_BYTES} bytes`);
  }
  return path;
}

// The helpers below expect normalised paths.

// True when `path` is `dir` itself or lies beneath it.
export function isWithin(path: string, dir: string): boolean {
  return dir === '/' || path === dir || path.startsWith(`${dir}/`);
}

// The paths that cut sorted `paths` into `parts` runs of about as many each: each run's
// last path but the final run's (fewer when there are fewer paths than parts).
export function evenCuts(paths: string[], parts: number): string[] {
  const per = Math.ceil(paths.length / parts);
  const cuts: string[] = [];
  for (let i = per; i < paths.length; i += per) cuts.push(paths[i - 1]!);
  return cuts;
}

// `/a/b` → `/a`, `/a` → `/`, `/` → `/`.
export function parentOf(path: string): string {
  const cut = path.lastIndexOf('/');
  return cut <= 0 ? '/' : path.slice(0, cut);
}

// `/a/b.txt` → `b.txt`, `/` → ``.
export function basename(path: string): string {
  return path.slice(path.lastIndexOf('/') + 1);
}

// Joins like POSIX `path.join` (a later absolute part does not reset), then normalises.
export function joinPath(...parts: string[]): string {
  return normalizePath(parts.join('/'));
}

// Every proper ancestor directory of a path except the root: `/a/b/c` → [`/a`, `/a/b`].
export function ancestorsOf(path: string): string[] {
  const out: string[] = [];
  for (let i = path.indexOf('/', 1); i !== -1; i = path.indexOf('/', i + 1)) out.push(path.slice(0, i));
  return out;
}

// `/a/b.txt` seen from `/a` → `b.txt`; from `/` → `a/b.txt`.
export function relativeTo(path: string, dir: string): string {
  if (path === dir) return basename(path);
  return dir === '/' ? path.slice(1) : path.slice(dir.length + 1);
}
