import type { LineMatcher } from '../thread-files.repository.js';
import { compileRegex, MAX_PATTERN_CHARS, toPostgresRegex } from '../vfs-regex.js';
import { cutEnd } from '../vfs-lines.js';
import { VfsError } from '../vfs.errors.js';

export type GrepMode = 'files_with_matches' | 'content' | 'count';
export const GREP_MODES: readonly GrepMode[] = ['files_with_matches', 'content', 'count'];
export const DEFAULT_MAX_MATCHES = 1000;
export const MAX_GREP_MATCHES = 100_000;

// A tenant's pattern matched in this process (a regex, or a glob that can backtrack)
// runs in a VM context under this budget of matching time per search (search-budget.ts):
// catastrophic backtracking is interrupted instead of stalling the event loop for every
// tenant (SEARCH_TIMEOUT).
export const DEFAULT_REGEX_BUDGET_MS = 1000;

export interface GrepOptions {
  path?: string;
  glob?: string;
  outputMode?: GrepMode;
  regex?: boolean;
  caseInsensitive?: boolean;
  maxMatches?: number;
}

// The one regex policy of every search (decision 008), whatever holds the files:
// - the dialect is JavaScript's; a pattern is accepted only if it also has a faithful
//   PostgreSQL (ARE) form (no backreferences, empty classes or repetition counts over
//   255), so a pattern one backend accepts, every backend accepts, with the same matches;
// - a tenant's regex never runs unbounded in a shared process: in PostgreSQL under the
//   connection's statement timeout, in this process under a time budget (text-grep.ts).
export function searchPattern(pattern: unknown, options: Pick<GrepOptions, 'regex' | 'caseInsensitive'> = {}): LineMatcher {
  if (typeof pattern !== 'string' || pattern === '') throw VfsError.invalidPattern(String(pattern), 'it is empty');
  if (pattern.length > MAX_PATTERN_CHARS) throw VfsError.invalidPattern(pattern.slice(0, cutEnd(pattern, 0, 80)), 'it is too long');
  if (pattern.includes('\u0000')) throw VfsError.invalidPattern(pattern, 'it contains a NUL character');
  const caseInsensitive = options.caseInsensitive ?? false;
  if (!options.regex) {
    if (pattern.includes('\n')) throw VfsError.invalidPattern(pattern, 'grep matches within one line; remove the newline');
    return { kind: 'literal', pattern, caseInsensitive };
  }
  compileRegex(pattern, caseInsensitive);
  const postgres = toPostgresRegex(pattern);
  if (postgres === null) {
    throw VfsError.invalidPattern(pattern, 'grep does not support backreferences, empty character classes or repetition counts over 255');
  }
  return { kind: 'regex', source: pattern, postgres, caseInsensitive };
}

// The output mode and the match limit of a grep, checked.
export function grepLimits(options: Pick<GrepOptions, 'outputMode' | 'maxMatches'>): { mode: GrepMode; max: number } {
  const mode = options.outputMode ?? 'files_with_matches';
  if (!GREP_MODES.includes(mode)) throw VfsError.invalidPattern(String(mode), `outputMode must be one of ${GREP_MODES.join(', ')}`);
  return { mode, max: wholeNumber(options.maxMatches, DEFAULT_MAX_MATCHES, 1, MAX_GREP_MATCHES) };
}

// A whole number in [min, max] (clamped), or the default when absent or not a number.
export function wholeNumber(value: number | undefined, fallback: number, min: number, max = Number.MAX_SAFE_INTEGER): number {
  if (value === undefined || value === null || !Number.isFinite(Number(value))) return fallback;
  return Math.min(max, Math.max(min, Math.floor(Number(value))));
}
