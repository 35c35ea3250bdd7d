import { createHash } from 'node:crypto';

// Tool results too large for the model's context are saved to the thread's files and
// replaced by a preview and a pointer the model can page with read_file.
//
// The threshold follows the DeepAgents note: a result is evicted above 20,000 tokens,
// estimated as 4 characters per token, i.e. 80,000 characters (JavaScript string length).

export const LARGE_TOOL_RESULTS_DIR = '/large_tool_results';
export const DEFAULT_EVICTION_TOKEN_LIMIT = 20_000;
export const CHARS_PER_TOKEN = 4;
export const DEFAULT_EVICTION_THRESHOLD_CHARS = DEFAULT_EVICTION_TOKEN_LIMIT * CHARS_PER_TOKEN;
export const DEFAULT_PREVIEW_HEAD_LINES = 10;
export const DEFAULT_PREVIEW_TAIL_LINES = 10;
export const DEFAULT_PREVIEW_LINE_CHARS = 500;
export const DEFAULT_MAX_EVICTED_RESULTS = 50;
// The page size suggested to the model (read_file's default limit).
const SUGGESTED_READ_LIMIT = 500;
const MAX_ID_CHARS = 128;

// The file tools' own results are never evicted: they are already paged or bounded,
// and evicting read_file's output would send the model round in circles.
export const NEVER_EVICTED_TOOLS: ReadonlySet<string> = new Set([
  'ls',
  'read_file',
  'write_file',
  'file_write',
  'edit_file',
  'glob',
  'grep',
  'delete_file',
]);

export interface EvictionOptions {
  thresholdChars?: number;
  headLines?: number;
  tailLines?: number;
  maxLineChars?: number;
  // More tools whose results stay in place.
  neverEvict?: Iterable<string>;
}

export interface ToolResultInput {
  toolName: string;
  toolCallId: string;
  content: string;
}

export type EvictionOutcome =
  | { evicted: false; content: string }
  | { evicted: true; path: string; content: string }
  // Too large, but saving failed: the content is cut to the preview and says so.
  | { evicted: false; content: string; error: unknown };

export type EvictionWriter = (path: string, content: string) => Promise<void>;

// Where evicted results live, for one thread: `list` answers the files under
// LARGE_TOOL_RESULTS_DIR.
export interface EvictionStore {
  write(path: string, content: string): Promise<void>;
  list(): Promise<{ path: string; modifiedAt: Date | null }[]>;
  delete(path: string): Promise<void>;
}

// A file name from a tool call id: [A-Za-z0-9._-] kept, anything else `_`, never empty,
// `.` or `..`. Ids cut to length get a hash suffix so two long ids sharing a prefix do
// not overwrite each other's results.
export function sanitizeToolCallId(id: string): string {
  const raw = typeof id === 'string' ? id : String(id ?? '');
  let name = raw.replace(/[^A-Za-z0-9._-]/g, '_');
  if (name.length > MAX_ID_CHARS) {
    const hash = createHash('sha256').update(raw).digest('hex').slice(0, 12);
    name = `${name.slice(0, MAX_ID_CHARS - hash.length - 1)}-${hash}`;
  }
  if (name === '') return 'tool_result';
  if (/^\.+$/.test(name)) return name.replace(/\./g, '_');
  return name;
}

export function evictedResultPath(toolCallId: string): string {
  return `${LARGE_TOOL_RESULTS_DIR}/${sanitizeToolCallId(toolCallId)}`;
}

export function shouldEvict(toolName: string, content: string, options: EvictionOptions = {}): boolean {
  const threshold = options.thresholdChars ?? DEFAULT_EVICTION_THRESHOLD_CHARS;
  if (typeof content !== 'string' || content.length <= threshold) return false;
  if (NEVER_EVICTED_TOOLS.has(toolName)) return false;
  for (const name of options.neverEvict ?? []) if (name === toolName) return false;
  return true;
}

function cutLine(line: string, max: number): string {
  const shown = line.endsWith('\r') ? line.slice(0, -1) : line;
  if (shown.length <= max) return shown;
  let end = max;
  const code = shown.charCodeAt(end - 1);
  if (code >= 0xd800 && code <= 0xdbff) end--;
  return `${shown.slice(0, end)}… [${(shown.length - end).toLocaleString('en-US')} more characters]`;
}

function numbered(n: number, line: string): string {
  return `${String(n).padStart(6)}\t${line}`;
}

const plural = (n: number, word: string) => `${n.toLocaleString('en-US')} ${word}${n === 1 ? '' : 's'}`;

// The message that replaces an evicted result: its size, the first and last lines
// (numbered as read_file numbers them, each cut to `maxLineChars`) and how to read the rest.
export function evictionPreview(content: string, path: string | null, options: EvictionOptions = {}): string {
  const head = options.headLines ?? DEFAULT_PREVIEW_HEAD_LINES;
  const tail = options.tailLines ?? DEFAULT_PREVIEW_TAIL_LINES;
  const maxLineChars = options.maxLineChars ?? DEFAULT_PREVIEW_LINE_CHARS;
  const lines = content.split('\n');
  if (lines.length > 1 && lines[lines.length - 1] === '') lines.pop();
  const total = lines.length;
  const out: string[] = [];
  const size = `${plural(content.length, 'character')}, ${plural(total, 'line')}`;
  out.push(
    path === null
      ? `Tool result too large to show in full (${size}).`
      : `Tool result too large to show in full (${size}); the full result was saved to ${path}.`,
  );
  if (total <= head + tail) {
    out.push('', 'Preview:');
    lines.forEach((line, i) => out.push(numbered(i + 1, cutLine(line, maxLineChars))));
  } else {
    out.push('', `First ${plural(head, 'line')}:`);
    for (let i = 0; i < head; i++) out.push(numbered(i + 1, cutLine(lines[i], maxLineChars)));
    out.push(`... [${plural(total - head - tail, 'line')} omitted] ...`);
    out.push(`Last ${plural(tail, 'line')}:`);
    for (let i = total - tail; i < total; i++) out.push(numbered(i + 1, cutLine(lines[i], maxLineChars)));
  }
  out.push('');
  if (path !== null) {
    out.push(
      `To see more, page through it with read_file(file_path='${path}', offset=0, limit=${SUGGESTED_READ_LIMIT}); ` +
        `offset is the 0-based line to start from, so raise it by limit for the next page, ` +
        `or search it with grep(pattern, path='${path}', output_mode='content').`,
    );
  }
  return out.join('\n');
}

// Saves a large result with `write` and returns its replacement; anything else comes
// back unchanged.
export async function evictToolResult(
  input: ToolResultInput,
  write: EvictionWriter,
  options: EvictionOptions = {},
): Promise<EvictionOutcome> {
  if (!shouldEvict(input.toolName, input.content, options)) return { evicted: false, content: input.content };
  const path = evictedResultPath(input.toolCallId);
  try {
    await write(path, input.content);
  } catch (error) {
    // Handing the whole result to the model would overflow its context; it gets the
    // preview and is told the rest is gone.
    const preview = evictionPreview(input.content, null, options);
    return {
      evicted: false,
      content: `${preview}The full result could not be saved (${(error as Error)?.message ?? String(error)}); only this preview is available.`,
      error,
    };
  }
  return { evicted: true, path, content: evictionPreview(input.content, path, options) };
}

// Keeps at most `maxKept` evicted results, deleting the oldest (by modification time,
// then path); `keep` (the result just written) is never deleted. Returns the deleted paths.
export async function pruneEvictedResults(
  store: EvictionStore,
  maxKept = DEFAULT_MAX_EVICTED_RESULTS,
  keep?: string,
): Promise<string[]> {
  const files = await store.list();
  if (files.length <= maxKept) return [];
  const time = (d: Date | null) => (d ? d.getTime() : 0);
  const oldestFirst = [...files].sort(
    (a, b) => time(a.modifiedAt) - time(b.modifiedAt) || (a.path < b.path ? -1 : a.path > b.path ? 1 : 0),
  );
  const candidates = oldestFirst.filter((f) => f.path !== keep);
  const excess = files.length - Math.max(0, maxKept);
  const deleted: string[] = [];
  for (const file of candidates.slice(0, excess)) {
    try {
      await store.delete(file.path);
      deleted.push(file.path);
    } catch {
      // Already gone (a concurrent prune) or undeletable: the next eviction retries.
    }
  }
  return deleted;
}

export interface ToolResultEvictorOptions extends EvictionOptions {
  maxKept?: number;
}

// Eviction plus the per-thread cap, for the tool node: one instance for all threads,
// the thread's store passed per call.
export class ToolResultEvictor {
  constructor(private readonly options: ToolResultEvictorOptions = {}) {}

  async process(input: ToolResultInput, store: EvictionStore): Promise<EvictionOutcome & { pruned?: string[] }> {
    const outcome = await evictToolResult(input, (path, content) => store.write(path, content), this.options);
    if (!outcome.evicted) return outcome;
    const pruned = await pruneEvictedResults(store, this.options.maxKept ?? DEFAULT_MAX_EVICTED_RESULTS, outcome.path);
    return { ...outcome, pruned };
  }
}
