import vm from 'node:vm';
import picomatch from 'picomatch';
import {
  basename,
  DEFAULT_MAX_MATCHES,
  displayLine,
  type GrepMode,
  type GrepOptions,
  type GrepResult,
  isWithin,
  MAX_LINE_CHARS,
  relativeTo,
  splitLines,
  VfsError,
} from '@drydock/vfs';
import { wholeNumber } from './backend-read.js';
import { BackendError } from './backend.errors.js';

// grep and glob for the backends that search in this process (filesystem, state); the
// store backend searches in PostgreSQL. Semantics follow VfsService: literal patterns by
// default, JavaScript regexes with `regex`, picomatch globs with dotfiles.

const GREP_MODES: readonly GrepMode[] = ['files_with_matches', 'content', 'count'];
const MAX_PATTERN_CHARS = 10_000;
const MAX_GREP_MATCHES = 100_000;
// A tenant's regex runs in a VM context under this wall-clock budget per grep call:
// catastrophic backtracking is interrupted instead of stalling the event loop for
// every tenant.
export const DEFAULT_REGEX_BUDGET_MS = 1000;

export interface TextFile {
  path: string;
  text: string;
}

export function compileGlob(pattern: string): (path: string) => boolean {
  try {
    return picomatch(pattern, { dot: true });
  } catch (error) {
    throw VfsError.invalidPattern(pattern, (error as Error).message);
  }
}

function checkPattern(pattern: string): void {
  if (typeof pattern !== 'string' || pattern.trim() === '') {
    throw VfsError.invalidPattern(String(pattern), 'it is empty');
  }
  if (pattern.length > MAX_PATTERN_CHARS) throw VfsError.invalidPattern(pattern.slice(0, 80), 'it is too long');
}

// glob's filter over absolute paths beneath `base`: the pattern is relative to `base`,
// or matched against the absolute path when it starts with `/`.
export function globFilter(pattern: string, base: string): (path: string) => boolean {
  checkPattern(pattern);
  const pat = pattern.replace(/^(\.\/)+/, '');
  const match = compileGlob(pat);
  if (pat.startsWith('/')) return (p) => isWithin(p, base) && match(p);
  return (p) => isWithin(p, base) && match(relativeTo(p, base));
}

// grep's `glob` filter, like ripgrep's: without `/` it matches the file name anywhere
// beneath the search path; with `/`, the path relative to it (absolute with a leading /).
export function grepGlobFilter(glob: string, under: string): (path: string) => boolean {
  const match = compileGlob(glob.replace(/^(\.\/)+/, ''));
  if (glob.startsWith('/')) return match;
  if (!glob.includes('/')) return (path) => match(basename(path));
  return (path) => match(relativeTo(path, under));
}

function shownLine(text: string): string {
  const line = displayLine(text);
  return line.length > MAX_LINE_CHARS ? `${line.slice(0, MAX_LINE_CHARS)}…` : line;
}

type LineScan = (lines: string[], max: number) => number[];

// Indices of matching lines, at most `max`.
function lineScanner(pattern: string, options: GrepOptions, budgetMs: number): LineScan {
  checkPattern(pattern);
  if (pattern.includes('\u0000')) throw VfsError.invalidPattern(pattern, 'it contains a NUL character');
  const caseInsensitive = options.caseInsensitive ?? false;
  if (!options.regex) {
    if (pattern.includes('\n')) throw VfsError.invalidPattern(pattern, 'grep matches within one line; remove the newline');
    const needle = caseInsensitive ? pattern.toLowerCase() : pattern;
    return (lines, max) => {
      const hits: number[] = [];
      for (let i = 0; i < lines.length && hits.length < max; i++) {
        const line = caseInsensitive ? lines[i].toLowerCase() : lines[i];
        if (line.includes(needle)) hits.push(i);
      }
      return hits;
    };
  }
  const flags = caseInsensitive ? 'i' : '';
  try {
    new RegExp(pattern, flags);
  } catch (error) {
    throw VfsError.invalidPattern(pattern, (error as Error).message.replace(/^Invalid regular expression: /, ''));
  }
  const context = vm.createContext({ source: pattern, flags, lines: [] as string[], max: 0 });
  vm.runInContext('var re = new RegExp(source, flags);', context);
  const scan = new vm.Script(
    'var hits = []; for (var i = 0; i < lines.length && hits.length < max; i++) if (re.test(lines[i])) hits.push(i); hits',
  );
  const deadline = Date.now() + budgetMs;
  return (lines, max) => {
    context.lines = lines;
    context.max = max;
    const timeout = Math.max(1, deadline - Date.now());
    try {
      return Array.from(scan.runInContext(context, { timeout }) as ArrayLike<number>);
    } catch (error) {
      if ((error as { code?: string }).code === 'ERR_SCRIPT_EXECUTION_TIMEOUT') {
        throw BackendError.searchTimeout(pattern, budgetMs);
      }
      throw error;
    } finally {
      context.lines = [];
    }
  };
}

function note(mode: GrepMode, max: number): string {
  const narrow = 'narrow the search with path or glob, or raise maxMatches';
  if (mode === 'content') return `Showing the first ${max} matching lines; ${narrow}.`;
  if (mode === 'count') return `Showing counts for the first ${max} matching files (there are more); ${narrow}.`;
  return `Showing the first ${max} matching files (there are more); ${narrow}.`;
}

export function grepOptionsChecked(options: GrepOptions): { mode: GrepMode; max: number } {
  const mode = options.outputMode ?? 'files_with_matches';
  if (!GREP_MODES.includes(mode)) {
    throw VfsError.invalidPattern(String(mode), `outputMode must be one of ${GREP_MODES.join(', ')}`);
  }
  return { mode, max: wholeNumber(options.maxMatches, DEFAULT_MAX_MATCHES, 1, MAX_GREP_MATCHES) };
}

export function truncatedResult(mode: GrepMode, found: Pick<GrepResult, 'files' | 'matches' | 'counts'>, truncated: boolean, max: number): GrepResult {
  return truncated ? { mode, ...found, truncated, note: note(mode, max) } : { mode, ...found, truncated };
}

// grep over text files already narrowed to the search path (`under`), in path order.
export async function grepTextFiles(
  files: AsyncIterable<TextFile> | Iterable<TextFile>,
  pattern: string,
  options: GrepOptions,
  under: string,
  budgetMs = DEFAULT_REGEX_BUDGET_MS,
): Promise<GrepResult> {
  const { mode, max } = grepOptionsChecked(options);
  const scan = lineScanner(pattern, options, budgetMs);
  const filter = options.glob ? grepGlobFilter(options.glob, under) : null;
  const matchedFiles: string[] = [];
  const counts: { path: string; count: number }[] = [];
  const matches: { path: string; line: number; text: string }[] = [];
  let truncated = false;
  for await (const file of files) {
    if (filter && !filter(file.path)) continue;
    const lines = splitLines(file.text);
    if (mode === 'content') {
      const hits = scan(lines, max + 1 - matches.length);
      for (const i of hits) matches.push({ path: file.path, line: i + 1, text: shownLine(lines[i]) });
      if (matches.length > max) {
        truncated = true;
        matches.length = max;
        break;
      }
      continue;
    }
    const hits = scan(lines, mode === 'count' ? lines.length : 1);
    if (hits.length === 0) continue;
    if (matchedFiles.length === max) {
      truncated = true;
      break;
    }
    matchedFiles.push(file.path);
    if (mode === 'count') counts.push({ path: file.path, count: hits.length });
  }
  if (mode === 'content') return truncatedResult(mode, { matches }, truncated, max);
  if (mode === 'count') return truncatedResult(mode, { counts }, truncated, max);
  return truncatedResult(mode, { files: matchedFiles }, truncated, max);
}
