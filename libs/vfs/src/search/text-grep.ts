import vm from 'node:vm';
import type { LineMatcher } from '../thread-files.repository.js';
import { splitLines } from '../vfs-lines.js';
import { SearchBudget } from './search-budget.js';
import { grepGlobFilter } from './search-glob.js';
import { DEFAULT_REGEX_BUDGET_MS, grepLimits, type GrepOptions } from './search-pattern.js';
import { grepResult, shownLine, type GrepResult } from './search-result.js';

export interface TextFile {
  path: string;
  text: string;
}

// Indices of matching lines, at most `max`.
export type LineScan = (lines: string[], max: number) => number[];

// How one search matches lines in this process (the in-memory repository, the state
// and filesystem backends): literals with includes, regexes in a VM context under one
// budget of matching time shared by every call of this scanner (search-budget.ts).
export function lineScanner(matcher: LineMatcher, budgetMs = DEFAULT_REGEX_BUDGET_MS): LineScan {
  if (matcher.kind === 'literal') {
    const needle = matcher.caseInsensitive ? matcher.pattern.toLowerCase() : matcher.pattern;
    return (lines, max) => {
      const hits: number[] = [];
      for (let i = 0; i < lines.length && hits.length < max; i++) {
        const line = matcher.caseInsensitive ? lines[i]!.toLowerCase() : lines[i]!;
        if (line.includes(needle)) hits.push(i);
      }
      return hits;
    };
  }
  const context = vm.createContext({ source: matcher.source, flags: matcher.caseInsensitive ? 'i' : '', lines: [] as string[], max: 0 });
  vm.runInContext('var re = new RegExp(source, flags);', context);
  const scan = new vm.Script(
    'var hits = []; for (var i = 0; i < lines.length && hits.length < max; i++) if (re.test(lines[i])) hits.push(i); hits',
  );
  const budget = new SearchBudget(matcher.source, budgetMs);
  return (lines, max) => {
    context.lines = lines;
    context.max = max;
    try {
      return Array.from(budget.run(scan, context) as ArrayLike<number>);
    } finally {
      context.lines = [];
    }
  };
}

// grep over text files already narrowed to the search path (`under`), in path order:
// what backends whose files are not in PostgreSQL run.
export async function grepTextFiles(
  files: AsyncIterable<TextFile> | Iterable<TextFile>,
  matcher: LineMatcher,
  options: Pick<GrepOptions, 'glob' | 'outputMode' | 'maxMatches'>,
  under: string,
  budgetMs = DEFAULT_REGEX_BUDGET_MS,
): Promise<GrepResult> {
  const { mode, max } = grepLimits(options);
  const scan = lineScanner(matcher, budgetMs);
  const filter = options.glob ? grepGlobFilter(options.glob, under, budgetMs) : null;
  const matchedFiles: string[] = [];
  const counts: { path: string; count: number }[] = [];
  const matches: { path: string; line: number; text: string }[] = [];
  let truncated = false;
  // Matching files beyond the limit are counted, not listed: the note says "of N", as
  // the database search does.
  let total = 0;
  for await (const file of files) {
    if (filter && !filter(file.path)) continue;
    const lines = splitLines(file.text);
    if (mode === 'content') {
      const hits = scan(lines, max + 1 - matches.length);
      for (const i of hits) matches.push({ path: file.path, line: i + 1, text: shownLine(lines[i]!) });
      if (matches.length > max) {
        truncated = true;
        matches.length = max;
        break;
      }
      continue;
    }
    const full = matchedFiles.length < max;
    const hits = scan(lines, mode === 'count' && full ? lines.length : 1);
    if (hits.length === 0) continue;
    total++;
    if (!full) {
      truncated = true;
      continue;
    }
    matchedFiles.push(file.path);
    if (mode === 'count') counts.push({ path: file.path, count: hits.length });
  }
  if (mode === 'content') return grepResult(mode, { matches }, truncated, max);
  if (mode === 'count') return grepResult(mode, { counts }, truncated, max, total);
  return grepResult(mode, { files: matchedFiles }, truncated, max, total);
}
