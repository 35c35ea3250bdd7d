import { VfsError } from './vfs.errors.js';

// grep's regex dialect is JavaScript's (no flags; case-insensitivity is an option). The
// database matches with PostgreSQL's ARE engine, so a pattern is translated where the
// two dialects differ (`\b` is a word boundary in JS and a backspace in ARE, identity
// escapes, literal braces, named groups). Patterns without a faithful translation
// (backreferences, `[]`, `[^]`, `\k`, repetition counts over 255) return null and are
// matched in JS instead.

export const MAX_PATTERN_CHARS = 10_000;
const ARE_MAX_REPEAT = 255;
const HEX2 = /^[0-9a-fA-F]{2}/;
const HEX4 = /^[0-9a-fA-F]{4}/;
const BOUND = /^\{(\d+)(?:,(\d*))?\}/;

export function compileRegex(pattern: string, caseInsensitive: boolean): RegExp {
  try {
    return new RegExp(pattern, caseInsensitive ? 'i' : '');
  } catch (error) {
    throw VfsError.invalidPattern(pattern, (error as Error).message.replace(/^Invalid regular expression: /, ''));
  }
}

function escapeToAre(source: string, i: number, inClass: boolean): { text: string; length: number } | null {
  const next = source[i + 1];
  if (next === undefined) return null;
  if (next >= '0' && next <= '9') return null;
  switch (next) {
    case 'b':
      return { text: inClass ? '\\b' : '\\y', length: 2 };
    case 'B':
      return { text: inClass ? 'B' : '\\Y', length: 2 };
    case 'D':
    case 'S':
    case 'W':
      return inClass ? null : { text: `\\${next}`, length: 2 };
    case 'd':
    case 's':
    case 'w':
    case 'n':
    case 'r':
    case 't':
    case 'f':
    case 'v':
      return { text: `\\${next}`, length: 2 };
    case 'x': {
      const hex = HEX2.exec(source.slice(i + 2, i + 4));
      return hex ? { text: `\\u00${hex[0]}`, length: 4 } : { text: 'x', length: 2 };
    }
    case 'u': {
      const hex = HEX4.exec(source.slice(i + 2, i + 6));
      return hex ? { text: `\\u${hex[0]}`, length: 6 } : { text: 'u', length: 2 };
    }
    case 'c': {
      const letter = source[i + 2];
      return letter && /[A-Za-z]/.test(letter) ? { text: `\\c${letter}`, length: 3 } : null;
    }
    case 'k':
      return inClass ? { text: 'k', length: 2 } : null;
  }
  // Identity escapes: a letter stands for itself in JS but may be special in ARE.
  if (/[A-Za-z]/.test(next) || next.charCodeAt(0) > 0x7f) return { text: next, length: 2 };
  return { text: `\\${next}`, length: 2 };
}

export function toPostgresRegex(source: string): string | null {
  let out = '';
  let inClass = false;
  for (let i = 0; i < source.length; i++) {
    const c = source[i];
    if (c === '\\') {
      const escape = escapeToAre(source, i, inClass);
      if (!escape) return null;
      out += escape.text;
      i += escape.length - 1;
      continue;
    }
    if (inClass) {
      if (c === ']') inClass = false;
      // `[[:alpha:]]` is a POSIX class in ARE but plain characters in JS.
      out += c === '[' ? '\\[' : c;
      continue;
    }
    switch (c) {
      case '[': {
        const negated = source[i + 1] === '^';
        // JS `[]` never matches and `[^]` matches anything; ARE reads `]` as a member.
        if (source[i + (negated ? 2 : 1)] === ']') return null;
        inClass = true;
        out += negated ? '[^' : '[';
        if (negated) i++;
        break;
      }
      case '(':
        if (source.startsWith('(?<', i) && source[i + 3] !== '=' && source[i + 3] !== '!') {
          const close = source.indexOf('>', i);
          if (close === -1) return null;
          out += '(';
          i = close;
        } else {
          out += c;
        }
        break;
      case '{': {
        const bound = BOUND.exec(source.slice(i, i + 24));
        if (bound) {
          if (Number(bound[1]) > ARE_MAX_REPEAT || Number(bound[2] || 0) > ARE_MAX_REPEAT) return null;
          out += bound[0];
          i += bound[0].length - 1;
        } else {
          out += '\\{';
        }
        break;
      }
      case '}':
      case ']':
        out += `\\${c}`;
        break;
      default:
        out += c;
    }
  }
  return inClass ? null : out;
}
