import { cutEnd, displayLine, MAX_LINE_CHARS } from '../vfs-lines.js';
import type { GrepMode } from './search-pattern.js';

export interface GrepResult {
  mode: GrepMode;
  files?: string[];
  matches?: { path: string; line: number; text: string }[];
  counts?: { path: string; count: number }[];
  truncated: boolean;
  note?: string;
}

// A matched line as shown: no trailing `\r`, cut after MAX_LINE_CHARS characters (one
// less where the cut would split an emoji).
export function shownLine(text: string): string {
  const line = displayLine(text);
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, cutEnd(line, 0, MAX_LINE_CHARS))}…` : line;
}

// The result of a grep, with a note when it stopped at `max`. `total` is the number of
// matching files when known.
export function grepResult(
  mode: GrepMode,
  found: Pick<GrepResult, 'files' | 'matches' | 'counts'>,
  truncated: boolean,
  max: number,
  total: number | null = null,
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
