import { countLines, DEFAULT_READ_LIMIT, displayLine, numberLines, splitLines, VfsError, wholeNumber } from '@drydock/vfs';
import type { ReadOptions, ReadResult } from './backend-protocol.js';


// The read window of a text file, the same for every backend: `limit` lines (default
// 500) from the 0-based line `offset`, line rules as in the VFS (a final `\n` ends the
// last line, a trailing `\r` is not shown).
export function readTextWindow(path: string, text: string, options: ReadOptions = {}): ReadResult {
  const offset = wholeNumber(options.offset, 0, 0);
  const limit = wholeNumber(options.limit, DEFAULT_READ_LIMIT, 1);
  if (text === '') return { kind: 'empty', path };
  const totalLines = countLines(text);
  const numbered = numberLines(text, offset, limit);
  if (numbered === null) return { kind: 'past_end', path, offset, totalLines };
  const lines = splitLines(text).slice(offset, offset + limit).map(displayLine);
  return { kind: 'text', path, offset, lines, numbered, totalLines, more: offset + lines.length < totalLines };
}

export function countOccurrences(text: string, needle: string): number {
  let n = 0;
  for (let i = text.indexOf(needle); i !== -1; i = text.indexOf(needle, i + needle.length)) n++;
  return n;
}

// The edit rule shared by the backends that edit in memory (VfsService has its own):
// `oldString` must occur once, or every occurrence goes with `replaceAll`.
export function replaceExact(
  path: string,
  text: string,
  oldString: string,
  newString: string,
  replaceAll: boolean,
): { text: string; occurrences: number } {
  if (typeof oldString !== 'string' || oldString === '') throw VfsError.emptyOldString(path);
  if (typeof newString !== 'string') throw new TypeError('edit: newString must be a string');
  const occurrences = countOccurrences(text, oldString);
  if (occurrences === 0) throw VfsError.stringNotFound(path);
  if (occurrences > 1 && !replaceAll) throw VfsError.ambiguousMatch(path, occurrences);
  if (oldString === newString) return { text, occurrences };
  const at = text.indexOf(oldString);
  const next = replaceAll
    ? text.split(oldString).join(newString)
    : text.slice(0, at) + newString + text.slice(at + oldString.length);
  return { text: next, occurrences };
}
