import { Readable } from 'node:stream';
import { ITEM_CHUNK, readJsonBatch, readNdjsonBatch } from './batch-body.js';
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
