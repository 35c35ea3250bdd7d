import { DrydockError } from '../errors/drydock.error.js';

// How deep a request's JSON may nest: objects and arrays inside each other. Nothing the
// API takes needs more than a few levels (a LangGraph message's content blocks are about
// six deep; batch metadata, MCP arguments and thread state are the caller's own, and
// rarely deeper than ten). Past it, code that walks a value recursively (class-transformer,
// JSON.stringify) runs out of stack: a 20 KB body nested 10,000 deep was a 500.
export const MAX_JSON_DEPTH = 128;

const QUOTE = 0x22; // "
const BACKSLASH = 0x5c; // \
const OPEN_OBJECT = 0x7b; // {
const OPEN_ARRAY = 0x5b; // [
const CLOSE_OBJECT = 0x7d; // }
const CLOSE_ARRAY = 0x5d; // ]

// Whether JSON text nests objects and arrays more than `maxDepth` deep, read before it is
// parsed, in one pass: brackets inside strings are not counted, and a string's content is
// skipped with indexOf (native), so a large body costs a fraction of its JSON.parse. It
// need not be valid JSON (JSON.parse judges that). A Buffer is read as UTF-8 bytes: every
// byte of a multi-byte character is >= 0x80, never a quote, a backslash or a bracket.
export function nestsDeeperThan(text: string | Buffer, maxDepth: number = MAX_JSON_DEPTH): boolean {
  return typeof text === 'string' ? stringNestsDeeper(text, maxDepth) : bytesNestDeeper(text, maxDepth);
}

function bytesNestDeeper(text: Buffer, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text[i]!;
    if (c === QUOTE) {
      // To the quote that ends the string: one after an even run of backslashes.
      let end = text.indexOf(QUOTE, i + 1);
      for (; end >= 0; end = text.indexOf(QUOTE, end + 1)) {
        let k = end - 1;
        while (text[k] === BACKSLASH) k--;
        if ((end - 1 - k) % 2 === 0) break;
      }
      if (end < 0) return false;
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

// The same over a string's UTF-16 code units (an NDJSON line, joined from its chunks).
// Two loops on purpose: each stays monomorphic (Buffer indexing or charCodeAt) over
// bodies of up to tens of MiB; one loop taking either would branch on every character.
function stringNestsDeeper(text: string, maxDepth: number): boolean {
  let depth = 0;
  for (let i = 0; i < text.length; i++) {
    const c = text.charCodeAt(i);
    if (c === QUOTE) {
      let end = text.indexOf('"', i + 1);
      for (; end >= 0; end = text.indexOf('"', end + 1)) {
        let k = end - 1;
        while (text.charCodeAt(k) === BACKSLASH) k--;
        if ((end - 1 - k) % 2 === 0) break;
      }
      if (end < 0) return false;
      i = end;
    } else if (c === OPEN_OBJECT || c === OPEN_ARRAY) {
      if (++depth > maxDepth) return true;
    } else if (c === CLOSE_OBJECT || c === CLOSE_ARRAY) {
      depth--;
    }
  }
  return false;
}

// The refusal of a body (or a line of one) nested past the limit: 400 JSON_TOO_DEEP.
export class JsonTooDeepError extends DrydockError {
  constructor(where: string, maxDepth: number = MAX_JSON_DEPTH, details: Record<string, unknown> = {}) {
    super('JSON_TOO_DEEP', `${where} nests JSON objects and arrays more than ${maxDepth} levels deep.`, 400, { maxDepth, ...details });
  }
}
