import vm from 'node:vm';
import picomatch from 'picomatch';
import { basename, isWithin, joinPath, normalizePath, relativeTo } from '../vfs-path.js';
import { cutEnd } from '../vfs-lines.js';
import { MAX_PATTERN_CHARS } from '../vfs-regex.js';
import { VfsError } from '../vfs.errors.js';
import { SearchBudget } from './search-budget.js';
import { DEFAULT_REGEX_BUDGET_MS } from './search-pattern.js';

// Glob rules of every file search: picomatch (`*`, `**`, `?`, `[...]`, `{a,b}`),
// dotfiles included; a path equal to the pattern matches too, as picomatch's own
// matcher does.
//
// picomatch compiles a glob to a backtracking regex: several wildcards in a row
// (`*a*a*a*a*b`) or an extglob can take seconds on one long name. Such a pattern is
// matched in a VM context under a budget of matching time shared by every path of one
// search (SEARCH_TIMEOUT past it, search-budget.ts), as grep's in-process regexes are;
// a plain pattern (at most two runs of stars, no extglob: `**/*.py`, `src/*_test.py`)
// runs directly.
export function compileGlob(pattern: string, budgetMs = DEFAULT_REGEX_BUDGET_MS): (path: string) => boolean {
  let re: RegExp;
  try {
    re = picomatch.makeRe(pattern, { dot: true });
  } catch (error) {
    throw VfsError.invalidPattern(pattern, (error as Error).message);
  }
  if (!mayBacktrack(pattern)) return (path) => path !== '' && (path === pattern || re.test(path));
  const context = vm.createContext({ source: re.source, flags: re.flags, path: '' });
  vm.runInContext('var re = new RegExp(source, flags);', context);
  const test = new vm.Script('re.test(path)');
  const budget = new SearchBudget(pattern, budgetMs);
  return (path) => {
    if (path === '' || path === pattern) return path !== '';
    context.path = path;
    return budget.run(test, context) === true;
  };
}

// Whether a glob's regex can backtrack badly: three or more runs of stars (`**` is one),
// or an extglob (`+(…)`, `*(…)`, `@(…)`, `?(…)`, `!(…)`). Two runs stay under a
// millisecond on a 4 KiB path; three take ~20 ms on one 255-byte name.
function mayBacktrack(pattern: string): boolean {
  return (pattern.match(/\*+/g)?.length ?? 0) > 2 || /[+*@?!]\(/.test(pattern);
}

// glob's pattern, checked: not empty, not too long, a leading `./` dropped.
export function globPattern(pattern: unknown): { pattern: string; absolute: boolean } {
  if (typeof pattern !== 'string' || pattern.trim() === '') throw VfsError.invalidPattern(String(pattern), 'it is empty');
  if (pattern.length > MAX_PATTERN_CHARS) throw VfsError.invalidPattern(pattern.slice(0, cutEnd(pattern, 0, 80)), 'it is too long');
  const pat = pattern.replace(/^(\.\/)+/, '');
  return { pattern: pat, absolute: pat.startsWith('/') };
}

// glob's filter over absolute paths beneath `base`: the pattern is relative to `base`,
// or matched against the absolute path when it starts with `/`.
export function globFilter(pattern: unknown, base: string, budgetMs = DEFAULT_REGEX_BUDGET_MS): (path: string) => boolean {
  const { pattern: pat, absolute } = globPattern(pattern);
  const match = compileGlob(pat, budgetMs);
  if (absolute) return (p) => isWithin(p, base) && match(p);
  return (p) => isWithin(p, base) && match(relativeTo(p, base));
}

// The narrowest directory to list for a glob: the pattern's literal leading directories
// (`src/**/*.py` from `/` → `/src`). Null when the pattern cannot match beneath `base`.
export function narrowGlobBase(base: string, pattern: string, absolute: boolean): string | null {
  const scan = picomatch.scan(pattern);
  if (scan.negated || !scan.base) return base;
  let literal: string;
  try {
    literal = absolute ? normalizePath(scan.base) : joinPath(base, scan.base);
  } catch {
    return base;
  }
  if (isWithin(literal, base)) return literal;
  return isWithin(base, literal) ? base : null;
}

// grep's `glob` filter, like ripgrep's: a pattern without `/` matches the file name
// anywhere beneath the search path; one with `/` matches the path relative to it (or
// the absolute path when it starts with `/`).
export function grepGlobFilter(glob: string, under: string, budgetMs = DEFAULT_REGEX_BUDGET_MS): (path: string) => boolean {
  const match = compileGlob(glob.replace(/^(\.\/)+/, ''), budgetMs);
  if (glob.startsWith('/')) return match;
  if (!glob.includes('/')) return (path) => match(basename(path));
  return (path) => match(relativeTo(path, under));
}
