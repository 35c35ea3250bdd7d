import type { Readable } from 'node:stream';
import { JsonTooDeepError, MAX_JSON_DEPTH, nestsDeeperThan } from '@drydock/core';
import type { BatchItemInput } from './batch.types.js';
import { parseBatchItem, parseBatchOptions, type BatchOptions, type ItemRules } from './batch-input.js';
import { BatchesError } from './batches.errors.js';

// The two forms of POST /v1/batches, read into options and chunks of checked items. The
// chunks are produced lazily, as the repository writes them, so an NDJSON body is never
// held whole; the first bad item throws, and the repository then records nothing.

export const ITEM_CHUNK = 1000;

export interface BatchBody {
  options: BatchOptions;
  items: AsyncIterable<BatchItemInput[]>;
}

export interface BodyRules extends ItemRules {
  maxItems: number;
  maxBodyBytes: number;
  // The longest NDJSON line; ndjsonLineLimit(rules) when unset.
  maxLineBytes?: number;
}

// {"items": [...], ...options}, already parsed by the JSON body parser.
export function readJsonBatch(body: unknown, rules: BodyRules): BatchBody {
  if (typeof body !== 'object' || body === null || Array.isArray(body)) {
    throw BatchesError.invalidOptions('the body must be a JSON object with "items"');
  }
  const { items, ...rest } = body as Record<string, unknown>;
  const options = parseBatchOptions(rest);
  if (!Array.isArray(items)) throw BatchesError.invalidOptions('"items" must be an array of items');
  if (items.length === 0) throw BatchesError.empty();
  if (items.length > rules.maxItems) throw BatchesError.tooManyItems(rules.maxItems);
  // Every item is checked before the batch is recorded: a bad one is found without
  // opening a transaction.
  const parsed = items.map((raw, index) => parseBatchItem(raw, index, rules));
  return {
    options,
    items: (async function* () {
      for (let i = 0; i < parsed.length; i += ITEM_CHUNK) yield parsed.slice(i, i + ITEM_CHUNK);
    })(),
  };
}

// application/x-ndjson: the first line holds the options, every further line one item.
// Blank lines are skipped. The options are read before this returns; the items as the
// returned iterable is consumed.
export async function readNdjsonBatch(stream: Readable, rules: BodyRules): Promise<BatchBody> {
  const lines = linesOf(stream, rules.maxBodyBytes, rules.maxLineBytes ?? ndjsonLineLimit(rules));
  let lineNo = 0;
  const next = async (): Promise<string | null> => {
    for (;;) {
      const { value, done } = await lines.next();
      if (done) return null;
      lineNo++;
      if (value.trim() !== '') return value;
    }
  };
  const first = await next();
  if (first === null) throw BatchesError.empty();
  const options = parseBatchOptions(parseLine(first, lineNo, null));
  const items = (async function* () {
    let index = 0;
    let chunk: BatchItemInput[] = [];
    try {
      for (let line = await next(); line !== null; line = await next()) {
        if (index >= rules.maxItems) throw BatchesError.tooManyItems(rules.maxItems);
        chunk.push(parseBatchItem(parseLine(line, lineNo, index), index, rules));
        index++;
        if (chunk.length === ITEM_CHUNK) {
          yield chunk;
          chunk = [];
        }
      }
      if (index === 0) throw BatchesError.empty();
      if (chunk.length) yield chunk;
    } finally {
      // A refused body is not read further here: the HTTP layer decides how much of the
      // rest to read, so that the client sees the answer (the gateway's refused-body.ts).
      await lines.return(undefined);
    }
  })();
  return { options, items };
}

// The longest line an NDJSON body may hold, unless the rules name one: room for an item
// at its limits (code and files) three times over, as JSON with every non-ASCII character
// written as a \u escape (Python's json.dumps does by default) takes, and 1 MiB for its
// paths, id and keys. A line is held whole to be parsed: this bounds that, and a longer
// one is refused as soon as it is read past it.
export function ndjsonLineLimit(rules: Pick<BodyRules, 'maxCodeBytes' | 'maxItemFileBytes'>): number {
  return 3 * (rules.maxCodeBytes + rules.maxItemFileBytes) + 1024 * 1024;
}

const NEWLINE = 0x0a;

// The body's lines (\n or \r\n), as UTF-8 text. Linear in the body: each chunk is
// searched once for newlines, from where the last search stopped, and the pieces of an
// unfinished line are kept, joined once when it ends (a newline byte is never part of a
// multi-byte character, so a line's bytes decode on their own). Past `maxBytes` of body
// it throws BODY_TOO_LARGE; a line past `maxLineBytes`, NDJSON_LINE_TOO_LONG as soon as
// that many of its bytes have been read.
async function* linesOf(stream: Readable, maxBytes: number, maxLineBytes: number): AsyncGenerator<string> {
  let bytes = 0;
  let lineNo = 1;
  let pieces: Buffer[] = [];
  let pending = 0;
  const line = (last: Buffer): string => {
    const text = (pieces.length === 0 ? last : Buffer.concat([...pieces, last], pending + last.length)).toString('utf8');
    pieces = [];
    pending = 0;
    lineNo++;
    return text.endsWith('\r') ? text.slice(0, -1) : text;
  };
  // Left open when a line is refused: destroying the request would close the connection
  // before the client reads the answer.
  for await (const chunk of stream.iterator({ destroyOnReturn: false })) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    bytes += buffer.length;
    if (bytes > maxBytes) throw BatchesError.bodyTooLarge(maxBytes);
    let start = 0;
    for (let newline = buffer.indexOf(NEWLINE); newline >= 0; newline = buffer.indexOf(NEWLINE, start)) {
      if (pending + newline - start > maxLineBytes) throw BatchesError.lineTooLong(lineNo, maxLineBytes);
      yield line(buffer.subarray(start, newline));
      start = newline + 1;
    }
    if (start < buffer.length) {
      pending += buffer.length - start;
      if (pending > maxLineBytes) throw BatchesError.lineTooLong(lineNo, maxLineBytes);
      pieces.push(buffer.subarray(start));
    }
  }
  if (pending > 0) yield line(Buffer.alloc(0));
}

// A line as JSON, refused past the depth every JSON body is held to (http/body-parsing.ts
// in the gateway): the options' metadata is walked by JSON.stringify.
function parseLine(line: string, lineNo: number, index: number | null): unknown {
  if (nestsDeeperThan(line, MAX_JSON_DEPTH)) {
    const where = index === null ? `Line ${lineNo} of the NDJSON body (the batch options)` : `Line ${lineNo} of the NDJSON body (item ${index})`;
    throw new JsonTooDeepError(where, MAX_JSON_DEPTH, index === null ? { line: lineNo } : { line: lineNo, index });
  }
  try {
    return JSON.parse(line);
  } catch {
    throw BatchesError.invalidNdjson(lineNo, index, 'it is not a JSON value');
  }
}
