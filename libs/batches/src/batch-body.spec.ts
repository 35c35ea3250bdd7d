import { Readable } from 'node:stream';
import { MAX_JSON_DEPTH } from '@drydock/core';
import { ITEM_CHUNK, ndjsonLineLimit, readJsonBatch, readNdjsonBatch } from './batch-body.js';
import type { BatchItemInput } from './batch.types.js';

const rules = { maxItems: 2500, maxBodyBytes: 1_000_000, maxCodeBytes: 1000, maxItemFiles: 5, maxItemFileBytes: 1000 };

async function drain(items: AsyncIterable<BatchItemInput[]>) {
  const chunks: BatchItemInput[][] = [];
  for await (const chunk of items) chunks.push(chunk);
  return chunks;
}

describe(readNdjsonBatch.name, () => {
  it('should read the options from the first line and the items in chunks, skipping blank lines', async () => {
    const lines = ['{"concurrency":2}', '', ...Array.from({ length: ITEM_CHUNK + 5 }, (_, i) => JSON.stringify({ code: `print(${i})` }))];
    // Split mid-line, as a network would.
    const text = lines.join('\r\n') + '\n';
    const sut = await readNdjsonBatch(Readable.from([text.slice(0, 37), text.slice(37)]), rules);
    expect(sut.options).toEqual({ concurrency: 2 });
    const chunks = await drain(sut.items);
    expect(chunks.map((c) => c.length)).toEqual([ITEM_CHUNK, 5]);
    expect(chunks[1]![4]).toEqual({ code: `print(${ITEM_CHUNK + 4})` });
  });

  it('should stop at the first bad line with its line number and item index', async () => {
    const sut = await readNdjsonBatch(Readable.from(['{}\n{"code":"1"}\n\n{"code":\n']), rules);
    await expect(drain(sut.items)).rejects.toMatchObject({ code: 'INVALID_NDJSON', details: { line: 4, index: 1 } });
  });

  it('should refuse more items than a batch may hold, naming the first one over', async () => {
    const body = ['{}', ...Array.from({ length: 2501 }, () => '{"code":"1"}')].join('\n');
    const sut = await readNdjsonBatch(Readable.from([body]), rules);
    await expect(drain(sut.items)).rejects.toMatchObject({ code: 'BATCH_TOO_LARGE', details: { index: 2500 } });
  });

  it('should refuse a body past the size limit while reading it', async () => {
    const big = ['{}', ...Array.from({ length: 100 }, () => JSON.stringify({ code: 'x'.repeat(900) }))].join('\n');
    const chunks = big.match(/[^]{1,4096}/g)!;
    const read = async () => drain((await readNdjsonBatch(Readable.from(chunks), { ...rules, maxBodyBytes: 20_000 })).items);
    await expect(read()).rejects.toMatchObject({ code: 'BODY_TOO_LARGE', status: 413 });
  });

  it('should read a long line that arrives in many small chunks, characters split across them', async () => {
    const code = 'print("é€😀")\n'.repeat(2000);
    const body = Buffer.from(`{}\r\n${JSON.stringify({ code })}\r\n${JSON.stringify({ code: 'print(2)' })}`);
    const chunks = Array.from({ length: Math.ceil(body.length / 7) }, (_, i) => body.subarray(i * 7, i * 7 + 7));
    const sut = await readNdjsonBatch(Readable.from(chunks), { ...rules, maxCodeBytes: 100_000 });
    expect(await drain(sut.items)).toEqual([[{ code }, { code: 'print(2)' }]]);
  });

  it('should refuse a line past the line limit as soon as it is read past it, before the rest of the body', async () => {
    let pulled = 0;
    const total = 8 * 1024 * 1024;
    const body = Readable.from(
      (function* () {
        yield Buffer.from('{}\n{"code":"');
        for (; pulled < total; pulled += 64 * 1024) yield Buffer.alloc(64 * 1024, 'x');
      })(),
    );
    const sut = await readNdjsonBatch(body, { ...rules, maxBodyBytes: 2 * total, maxLineBytes: 100_000 });
    await expect(drain(sut.items)).rejects.toMatchObject({ code: 'NDJSON_LINE_TOO_LONG', status: 413, details: { line: 2, maxLineBytes: 100_000 } });
    expect(pulled).toBeLessThan(100_000 + 2 * 64 * 1024);
  });

  it('should hold a line to room for an item at its limits, its text written as \\u escapes', async () => {
    const limits = { ...rules, maxCodeBytes: 1000, maxItemFileBytes: 1000 };
    // 'é' is two bytes of UTF-8 and six as \u00e9.
    const item = JSON.stringify({ code: 'é'.repeat(500), files: { '/a.txt': 'é'.repeat(500) } }).replace(/é/g, '\\u00e9');
    const sut = await readNdjsonBatch(Readable.from([`{}\n${item}\n`]), limits);
    expect(await drain(sut.items)).toEqual([[{ code: 'é'.repeat(500), files: { '/a.txt': 'é'.repeat(500) } }]]);
    expect(ndjsonLineLimit(limits)).toBeGreaterThan(item.length);
  });

  it('should refuse a line nested past the JSON depth limit, in the options or an item', async () => {
    const deep = '['.repeat(10_000) + ']'.repeat(10_000);
    const options = readNdjsonBatch(Readable.from([`{"metadata":{"a":${deep}}}\n{"code":"1"}\n`]), rules);
    await expect(options).rejects.toMatchObject({ code: 'JSON_TOO_DEEP', status: 400, details: { line: 1, maxDepth: MAX_JSON_DEPTH } });
    const item = await readNdjsonBatch(Readable.from([`{}\n\n{"code":"1","files":{"/a":${deep}}}\n`]), rules);
    await expect(drain(item.items)).rejects.toMatchObject({ code: 'JSON_TOO_DEEP', details: { line: 3, index: 0 } });
    // At the limit it is read (and judged as options).
    const atLimit = `{"metadata":{"a":${'['.repeat(MAX_JSON_DEPTH - 2)}${']'.repeat(MAX_JSON_DEPTH - 2)}}}\n{"code":"1"}\n`;
    expect((await readNdjsonBatch(Readable.from([atLimit]), rules)).options.metadata).toBeDefined();
  });

  it('should refuse a body without items', async () => {
    await expect(readNdjsonBatch(Readable.from(['']), rules)).rejects.toMatchObject({ code: 'BATCH_EMPTY' });
    const onlyOptions = await readNdjsonBatch(Readable.from(['{"concurrency":1}\n']), rules);
    await expect(drain(onlyOptions.items)).rejects.toMatchObject({ code: 'BATCH_EMPTY' });
  });
});

describe(readJsonBatch.name, () => {
  it('should check every item before yielding any', () => {
    expect(() => readJsonBatch({ items: [{ code: '1' }, { code: 2 }] }, rules)).toThrow(/Item 1 is invalid/);
  });

  it('should split the options from the items', async () => {
    const sut = readJsonBatch({ items: [{ code: '1' }], metadata: { a: 1 } }, rules);
    expect(sut.options).toEqual({ metadata: { a: 1 } });
    expect(await drain(sut.items)).toEqual([[{ code: '1' }]]);
  });
});
