import { DrydockError } from '@drydock/core';

export class BatchesError extends DrydockError {
  static notFound(batchId: string) {
    return new BatchesError('BATCH_NOT_FOUND', `No batch with id ${batchId}.`, 404);
  }
  static empty() {
    return new BatchesError('BATCH_EMPTY', 'A batch needs at least one item.', 400);
  }
  static tooManyItems(max: number) {
    return new BatchesError('BATCH_TOO_LARGE', `A batch holds at most ${max} items; split it into several batches.`, 413, {
      index: max,
      maxItems: max,
    });
  }
  static invalidItem(index: number, problem: string, field?: string) {
    return new BatchesError('INVALID_BATCH_ITEM', `Item ${index} is invalid: ${problem}.`, 400, field ? { index, field } : { index });
  }
  static invalidOptions(problem: string) {
    return new BatchesError('INVALID_BATCH_OPTIONS', `The batch options are invalid: ${problem}.`, 400);
  }
  static invalidNdjson(line: number, index: number | null, problem: string) {
    const where = index === null ? `line ${line} (the batch options)` : `line ${line} (item ${index})`;
    return new BatchesError('INVALID_NDJSON', `The NDJSON body is invalid at ${where}: ${problem}.`, 400, {
      line,
      ...(index === null ? {} : { index }),
    });
  }
  static lineTooLong(line: number, max: number) {
    return new BatchesError('NDJSON_LINE_TOO_LONG', `Line ${line} of the NDJSON body is longer than the ${max} bytes a line may hold.`, 413, {
      line,
      maxLineBytes: max,
    });
  }
  static bodyTooLarge(max: number) {
    return new BatchesError('BODY_TOO_LARGE', `The batch body is larger than the ${max} bytes allowed.`, 413);
  }
}
