// Fenced code blocks in a model's message text, following CommonMark's rules for fences
// at the top level of a document (not inside block quotes or list-item indentation
// beyond three spaces):
// - a fence is 3+ backticks or 3+ tildes, indented by at most 3 spaces;
// - a backtick fence's info string may not contain a backtick (so an inline ```x``` on
//   one line is not a fence); a tilde fence's may contain anything;
// - the closing fence uses the same character, is at least as long as the opening one,
//   is indented by at most 3 spaces and has nothing after it but spaces or tabs; so a
//   ```` fence can hold ``` lines and a ``` fence can hold ~~~ lines;
// - up to as many leading spaces as the opening fence had are removed from each line;
// - an unclosed fence runs to the end of the text (see `closed`).
// Line endings may be \n, \r\n or \r; content always uses \n.

export type FenceChar = '`' | '~';

export interface FencedBlock {
  // The opening fence's character and length (a ```` fence is '`' and 4).
  fenceChar: FenceChar;
  fenceLength: number;
  // The info string after the opening fence, trimmed ('' when there is none).
  info: string;
  // The first word of the info string, lower-cased ('python', 'c++', 'objective-c'), or
  // null when there is none or the first word is a key=value hint.
  language: string | null;
  // The `file=<path>` or `path=<path>` hint of the info string, as written (quotes
  // removed), or null.
  path: string | null;
  // The lines between the fences joined with \n, without a final line ending.
  content: string;
  // Offsets in the text: `start` is the first character of the opening fence's line
  // (indentation included), `end` is just past the closing fence (before its line
  // ending), or the text's length when the fence is unclosed.
  start: number;
  end: number;
  // False when no closing fence was found. CommonMark then runs the block to the end of
  // the text; so do we, because a model that ends its text with code and goes straight
  // to the tool call often leaves the fence open, while a reply cut off by the token
  // limit carries no tool call to execute at all.
  closed: boolean;
}

interface Line {
  text: string;
  start: number;
  end: number;
}

const OPENING_FENCE = /^( {0,3})(`{3,}|~{3,})(.*)$/;
const CLOSING_FENCE = /^ {0,3}(`{3,}|~{3,})[ \t]*$/;
const HINT_KEYS = new Set(['file', 'path']);
// `key=value`, `key="value with spaces"`, `key='value'`, or a bare word.
const INFO_TOKEN = /([A-Za-z][\w-]*)=(?:"([^"]*)"|'([^']*)'|(\S*))|(\S+)/g;

// All fenced blocks of `text`, in order.
export function parseFencedBlocks(text: string): FencedBlock[] {
  const lines = splitLines(text);
  const blocks: FencedBlock[] = [];
  let i = 0;
  while (i < lines.length) {
    const opening = openingFence(lines[i].text);
    if (!opening) {
      i += 1;
      continue;
    }
    const { indent, fenceChar, fenceLength, info } = opening;
    const body: string[] = [];
    let closedAt = -1;
    for (let j = i + 1; j < lines.length; j += 1) {
      if (isClosingFence(lines[j].text, fenceChar, fenceLength)) {
        closedAt = j;
        break;
      }
      body.push(stripIndent(lines[j].text, indent));
    }
    const { language, path } = parseInfo(info);
    blocks.push({
      fenceChar,
      fenceLength,
      info,
      language,
      path,
      content: body.join('\n'),
      start: lines[i].start,
      end: closedAt >= 0 ? lines[closedAt].end : text.length,
      closed: closedAt >= 0,
    });
    if (closedAt < 0) break;
    i = closedAt + 1;
  }
  return blocks;
}

// The language tag and file hint of an info string such as `python file="data/in.csv"`.
export function parseInfo(info: string): { language: string | null; path: string | null } {
  let language: string | null = null;
  let path: string | null = null;
  let first = true;
  for (const match of info.matchAll(INFO_TOKEN)) {
    const [, key, doubleQuoted, singleQuoted, bare, word] = match;
    if (word !== undefined) {
      if (first) language = word.toLowerCase();
    } else if (path === null && HINT_KEYS.has(key.toLowerCase())) {
      const value = doubleQuoted ?? singleQuoted ?? bare;
      if (value.trim() !== '') path = value.trim();
    }
    first = false;
  }
  return { language, path };
}

function openingFence(line: string) {
  const match = OPENING_FENCE.exec(line);
  if (!match) return null;
  const [, indent, fence, rest] = match;
  const fenceChar = fence[0] as FenceChar;
  // A backtick after a backtick fence means inline code (```x```), not a fence.
  if (fenceChar === '`' && rest.includes('`')) return null;
  return { indent: indent.length, fenceChar, fenceLength: fence.length, info: rest.trim() };
}

function isClosingFence(line: string, fenceChar: FenceChar, fenceLength: number): boolean {
  const match = CLOSING_FENCE.exec(line);
  return match !== null && match[1][0] === fenceChar && match[1].length >= fenceLength;
}

function stripIndent(line: string, indent: number): string {
  let n = 0;
  while (n < indent && line[n] === ' ') n += 1;
  return line.slice(n);
}

// Lines with their offsets; a final line ending does not start an extra empty line.
function splitLines(text: string): Line[] {
  const lines: Line[] = [];
  const terminator = /\r\n|\r|\n/g;
  let start = 0;
  for (const match of text.matchAll(terminator)) {
    lines.push({ text: text.slice(start, match.index), start, end: match.index });
    start = match.index + match[0].length;
  }
  if (start < text.length) lines.push({ text: text.slice(start), start, end: text.length });
  return lines;
}
