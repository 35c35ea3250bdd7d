import { parseBatchItem, parseBatchOptions } from './batch-input.js';

const rules = { maxCodeBytes: 20, maxItemFiles: 2, maxItemFileBytes: 10 };

describe(parseBatchItem.name, () => {
  it('should keep code, files (as normalized thread paths) and the client id', () => {
    expect(parseBatchItem({ code: 'print(1)', files: { '/data//in.csv': 'a,b' }, id: 'x' }, 0, rules)).toEqual({
      code: 'print(1)',
      files: { '/data/in.csv': 'a,b' },
      id: 'x',
    });
  });

  it.each([
    ['not an object', 'print(1)', undefined],
    ['code missing', { files: {} }, 'code'],
    ['code not a string', { code: 1 }, 'code'],
    ['code too long', { code: 'x'.repeat(21) }, 'code'],
    ['unknown field', { code: '1', timeoutMs: 5 }, 'timeoutMs'],
    ['id not a string', { code: '1', id: 3 }, 'id'],
    ['files not an object', { code: '1', files: ['/a'] }, 'files'],
    ['a path with ..', { code: '1', files: { '/a/../../b': 'x' } }, 'files'],
    ['a path in /artifacts', { code: '1', files: { '/artifacts/a': 'x' } }, 'files'],
    ['content not text', { code: '1', files: { '/a': 1 } }, 'files'],
    ['too many files', { code: '1', files: { '/a': '', '/b': '', '/c': '' } }, 'files'],
    ['too many bytes', { code: '1', files: { '/a': 'x'.repeat(11) } }, 'files'],
  ])('should refuse %s with INVALID_BATCH_ITEM and the index', (_name, raw, field) => {
    try {
      parseBatchItem(raw, 7, rules);
      throw new Error('accepted');
    } catch (error) {
      expect(error).toMatchObject({ code: 'INVALID_BATCH_ITEM', status: 400, details: field ? { index: 7, field } : { index: 7 } });
      expect((error as Error).message).toMatch(/^Item 7 is invalid: /);
    }
  });
});

describe(parseBatchOptions.name, () => {
  it('should accept the documented options', () => {
    const options = { limits: { memoryMb: 256 }, timeoutMs: 5000, concurrency: 3, idempotencyKey: 'k', metadata: { a: 1 } };
    expect(parseBatchOptions(options)).toEqual(options);
  });

  it.each([
    [{ timeout: 5 }, /unknown field "timeout"/],
    [{ concurrency: 0 }, /"concurrency"/],
    [{ limits: { memoryMb: 256, gpus: 1 } }, /unknown field "gpus"/],
    [{ metadata: { big: 'x'.repeat(17_000) } }, /"metadata"/],
    [[1, 2], /JSON object/],
  ])('should refuse %j with INVALID_BATCH_OPTIONS', (raw, message) => {
    expect(() => parseBatchOptions(raw)).toThrow(message);
    try {
      parseBatchOptions(raw);
    } catch (error) {
      expect(error).toMatchObject({ code: 'INVALID_BATCH_OPTIONS', status: 400 });
    }
  });
});
