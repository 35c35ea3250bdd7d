// How `read` and `grep` see a text file's lines: split on `\n`; a final `\n` ends the
// last line instead of starting an empty one; an empty file has no lines. A trailing
// `\r` (CRLF files) is not shown.

export const DEFAULT_READ_LIMIT = 500;
// Longer lines are shown in chunks: `    12` then continuation rows `  12.1`, `  12.2`.
export const MAX_LINE_CHARS = 2000;

export function splitLines(text: string): string[] {
  if (text === '') return [];
  const lines = text.split('\n');
  if (lines[lines.length - 1] === '') lines.pop();
  return lines;
}

export function countLines(text: string): number {
  if (text === '') return 0;
  let n = 1;
  for (let i = text.indexOf('\n'); i !== -1; i = text.indexOf('\n', i + 1)) n++;
  return text.endsWith('\n') ? n - 1 : n;
}

export function displayLine(line: string): string {
  return line.endsWith('\r') ? line.slice(0, -1) : line;
}

const isHighSurrogate = (code: number) => code >= 0xd800 && code <= 0xdbff;

// Where to cut `line` at most `max` UTF-16 units from `start`: one unit sooner when the
// cut would fall between the two halves of a character beyond the BMP (an emoji), whose
// lone half is not text (JSON would carry it as an escaped lone surrogate).
export function cutEnd(line: string, start: number, max: number): number {
  const end = Math.min(start + max, line.length);
  return end < line.length && end - 1 > start && isHighSurrogate(line.charCodeAt(end - 1)) ? end - 1 : end;
}

function pushNumbered(out: string[], n: number, raw: string): void {
  const line = displayLine(raw);
  if (line.length <= MAX_LINE_CHARS) {
    out.push(`${String(n).padStart(6)}\t${line}`);
    return;
  }
  for (let start = 0, part = 0; start < line.length; part++) {
    const end = cutEnd(line, start, MAX_LINE_CHARS);
    const label = part === 0 ? String(n) : `${n}.${part}`;
    out.push(`${label.padStart(6)}\t${line.slice(start, end)}`);
    start = end;
  }
}

// `cat -n` of lines [offset, offset + limit) (offset 0-based, numbers 1-based), walking
// only as far as needed rather than splitting the whole text. Null when the file has no
// line at `offset`.
export function numberLines(text: string, offset: number, limit: number): string | null {
  let start = 0;
  for (let skipped = 0; skipped < offset; skipped++) {
    const nl = text.indexOf('\n', start);
    if (nl === -1 || nl === text.length - 1) return null;
    start = nl + 1;
  }
  if (start >= text.length) return null;
  const out: string[] = [];
  for (let n = offset + 1; n <= offset + limit; n++) {
    const nl = text.indexOf('\n', start);
    pushNumbered(out, n, text.slice(start, nl === -1 ? text.length : nl));
    if (nl === -1 || nl === text.length - 1) break;
    start = nl + 1;
  }
  return out.join('\n');
}
