import { Injectable, type PipeTransform } from '@nestjs/common';
import { THREAD_ID_PATTERN } from '@drydock/core';
import { LangGraphError } from './langgraph.errors.js';
import { isUuid } from './run-request.js';

// LangGraph thread ids are UUIDs. They are also Drydock thread ids (the agent's files and
// sandbox session live under them), so they must fit THREAD_ID_PATTERN too, which every
// UUID does. Lower-cased, as PostgreSQL's uuid type would compare them.
export function parseThreadId(value: string): string {
  if (!isUuid(value) || !THREAD_ID_PATTERN.test(value)) throw LangGraphError.invalidThreadId(value);
  return value.toLowerCase();
}

@Injectable()
export class LangGraphThreadIdPipe implements PipeTransform<string, string> {
  transform(value: string): string {
    return parseThreadId(value);
  }
}
