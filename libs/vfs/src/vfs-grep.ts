import picomatch from 'picomatch';
import type { LineMatcher } from './thread-files.repository.js';
import { displayLine, MAX_LINE_CHARS, splitLines } from './vfs-lines.js';
import { basename, relativeTo } from './vfs-path.js';
import { compileRegex } from './vfs-regex.js';
import { VfsError } from './vfs.errors.js';

export type GrepMode = 'files_with_matches' | 'content' | 'count';
export const GREP_MODES: readonly GrepMode[] = ['files_with_matches', 'content', 'count'];
export const DEFAULT_MAX_MATCHES = 1000;

export interface GrepResult {
  mode: GrepMode;
  files?: string[];
  matches?: { path: string; line: number; text: string }[];
  counts?: { path: string; count: number }[];
  truncated: boolean;
  note?: string;
}

// A line matcher in JS (the in-memory paths; PostgreSQL has its own in SQL).
export function lineTest(matcher: LineMatcher): (line: string) => boolean {
  if (matcher.kind === 'regex') {
    const re = compileRegex(matcher.source, matcher.caseInsensitive);
    return (line) => re.test(line);
  }
  if (!matcher.caseInsensitive) return (line) => line.includes(matcher.pattern);
  const needle = matcher.pattern.toLowerCase();
  return (line) => line.toLowerCase().includes(needle);
}

export function compileGlob(pattern: string): (path: string) => boolean {
  try {
    return picomatch(pattern, { dot: true });
  } catch (error) {
    throw VfsError.invalidPattern(pattern, (error as Error).message);
  }
}

// grep's `glob` filter, like ripgrep's: a pattern without `/` matches the file name
// anywhere beneath the search path; one with `/` matches the path relative to it (or
// the absolute path when it starts with `/`).
export function grepGlobFilter(glob: string, under: string): (path: string) => boolean {
  const match = compileGlob(glob.replace(/^(\.\/)+/, ''));
  if (glob.startsWith('/')) return match;
  if (!glob.includes('/')) return (path) => match(basename(path));
  return (path) => match(relativeTo(path, under));
}

// A matched line as shown: no trailing `\r`, cut after MAX_LINE_CHARS characters.
export function shownLine(text: string): string {
  const line = displayLine(text);
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
}

// The result of a grep, with a note when it stopped at `max`. `total` is the number of
// matching files when known.
export function grepResult(
  mode: GrepMode,
  found: Pick<GrepResult, 'files' | 'matches' | 'counts'>,
  truncated: boolean,
  max: number,
  total: number | null,
): GrepResult {
  if (!truncated) return { mode, ...found, truncated };
  const narrow = 'narrow the search with path or glob, or raise maxMatches';
  const of = total === null ? ' (there are more)' : ` of ${total}`;
  const note =
    mode === 'content'
      ? `Showing the first ${max} matching lines; ${narrow}.`
      : mode === 'count'
        ? `Showing counts for the first ${max}${of} matching files; ${narrow}.`
        : `Showing the first ${max}${of} matching files; ${narrow}.`;
  return { mode, ...found, truncated, note };
}
