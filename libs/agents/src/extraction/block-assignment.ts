// Which fenced block of a model message feeds which extraction tool call
// (`python_run_prepared`, `file_write`) made in that same message. The rules are meant
// to be easy for a model to follow and for a person to predict:
// 1. A block whose info string names a file (```python file=/tmp/run.py, also path=, and
//    quoted values) goes to the first call whose `file_path` is the same path, ignoring
//    a leading '/' or './' and repeated slashes. Hinted blocks are used only this way.
// 2. Every call still without a block takes the next unhinted block, in message order.
//    The language tag plays no part: a model that shows an example block before its
//    code names the file to disambiguate, rather than us guessing from tags.
// 3. A call left without a block gets an error sentence telling the model what to do.
//    Blocks left over are ignored.
// Calls to other tools are ignored; a call without an id still takes its block (so the
// order stays as the model wrote it) but has no entry in the result.
import { isExtractionTool } from './extraction.constants.js';
import { parseFencedBlocks, type FencedBlock } from './fenced-blocks.js';

// The shape of LangChain's `ToolCall` that matters here.
export interface ExtractionToolCall {
  id?: string;
  name: string;
  args?: Record<string, unknown>;
}

export type BlockAssignment =
  | { ok: true; content: string; language: string | null; blockIndex: number }
  | { ok: false; error: string };

// Assigns the fenced blocks of `text` to `calls` (a message's tool calls, in order).
// Returns tool call id → the block's content, or an error for the model.
export function assignBlocksToCalls(
  text: string,
  calls: readonly ExtractionToolCall[],
): Map<string, BlockAssignment> {
  const blocks = parseFencedBlocks(text);
  const wanting = calls.filter((call) => isExtractionTool(call.name));
  const chosen = new Array<number | undefined>(wanting.length);
  const claimed = new Set<number>();

  wanting.forEach((call, k) => {
    const target = filePathOf(call);
    if (target === null) return;
    const index = blocks.findIndex(
      (block, i) => !claimed.has(i) && block.path !== null && samePath(block.path, target),
    );
    if (index < 0) return;
    claimed.add(index);
    chosen[k] = index;
  });

  const unhinted = blocks.flatMap((block, i) => (block.path === null ? [i] : []));
  let next = 0;
  wanting.forEach((_, k) => {
    if (chosen[k] === undefined && next < unhinted.length) chosen[k] = unhinted[next++];
  });
  const unclaimedHints = blocks.filter((block, i) => block.path !== null && !claimed.has(i));

  const result = new Map<string, BlockAssignment>();
  wanting.forEach((call, k) => {
    if (call.id === undefined) return;
    const index = chosen[k];
    if (index === undefined) {
      const error = missingBlockError(call, blocks.length, wanting.length, unclaimedHints);
      result.set(call.id, { ok: false, error });
      return;
    }
    const block = blocks[index];
    result.set(call.id, { ok: true, content: block.content, language: block.language, blockIndex: index });
  });
  return result;
}

// Paths as a model writes them: '/data/a.csv', 'data/a.csv' and './data/a.csv' match.
export function samePath(a: string, b: string): boolean {
  return comparable(a) === comparable(b);
}

function comparable(path: string): string {
  return path
    .trim()
    .replace(/\/{2,}/g, '/')
    .replace(/^(?:\.\/|\/)+/, '');
}

function filePathOf(call: ExtractionToolCall): string | null {
  const value = call.args?.file_path;
  return typeof value === 'string' && value.trim() !== '' ? value : null;
}

function missingBlockError(
  call: ExtractionToolCall,
  blockCount: number,
  callCount: number,
  unclaimedHints: readonly FencedBlock[],
): string {
  const path = filePathOf(call);
  const signature = path === null ? call.name : `${call.name}(file_path=${JSON.stringify(path)})`;
  const isCode = call.name === 'python_run_prepared';
  const what = isCode ? 'the Python code' : 'the file content';
  const fence = isCode ? '```python' : '```';
  if (blockCount === 0) {
    return (
      `No fenced code block found in your message for ${signature}. ` +
      `Put ${what} in a ${fence} block in the same message as the tool call.`
    );
  }
  const hints = unclaimedHints.map(
    (block) => ` The block marked file=${JSON.stringify(block.path)} matches no tool call's file_path.`,
  );
  const hint = path === null ? '<path>' : /\s/.test(path) ? JSON.stringify(path) : path;
  const example = `${fence} file=${hint}`;
  return (
    `No fenced code block is left in your message for ${signature}: the message has ` +
    `${plural(blockCount, 'fenced code block')} for ${plural(callCount, 'tool call')} that each need one.` +
    hints.join('') +
    ' Write one block per tool call, in the same order as the calls, or put each' +
    ` file's path on its opening fence (${example}).`
  );
}

function plural(n: number, noun: string): string {
  return `${n} ${noun}${n === 1 ? '' : 's'}`;
}
