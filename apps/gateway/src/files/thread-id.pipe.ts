import { Injectable, type PipeTransform } from '@nestjs/common';
import { DrydockError, THREAD_ID_PATTERN, THREAD_ID_RULE } from '@drydock/core';

@Injectable()
export class ThreadIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    if (!THREAD_ID_PATTERN.test(value)) {
      throw new DrydockError('INVALID_THREAD_ID', `A thread id must be ${THREAD_ID_RULE}.`, 400);
    }
    return value;
  }
}
