import { StringDecoder } from 'node:string_decoder';
import type { Readable } from 'node:stream';
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
  const lines = linesOf(stream, rules.maxBodyBytes);
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
      // A refused body is not read further.
      await lines.return(undefined);
      stream.resume();
    }
  })();
  return { options, items };
}

// The body's lines (\n or \r\n), decoded as UTF-8 across chunk boundaries; past
// `maxBytes` it throws BODY_TOO_LARGE.
async function* linesOf(stream: Readable, maxBytes: number): AsyncGenerator<string> {
  const decoder = new StringDecoder('utf8');
  let bytes = 0;
  let rest = '';
  for await (const chunk of stream) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    bytes += buffer.length;
    if (bytes > maxBytes) throw BatchesError.bodyTooLarge(maxBytes);
    rest += decoder.write(buffer);
    let newline: number;
    while ((newline = rest.indexOf('\n')) >= 0) {
      yield rest.slice(0, newline).replace(/\r$/, '');
      rest = rest.slice(newline + 1);
    }
  }
  rest += decoder.end();
  if (rest !== '') yield rest.replace(/\r$/, '');
}

function parseLine(line: string, lineNo: number, index: number | null): unknown {
  try {
    return JSON.parse(line);
  } catch {
    throw BatchesError.invalidNdjson(lineNo, index, 'it is not a JSON value');
  }
}
