import { Inject, Injectable } from '@nestjs/common';
import type { Redis } from 'ioredis';
import { REDIS } from '@drydock/core';
import type { TemplateVersionStatus } from './template.entity.js';

// A build's log while it runs, and for a day after: a Redis stream per version, one
// entry per line and a last `done` entry with the version's status. The worker appends;
// GET .../versions/:version/logs follows it from its first entry, on any gateway. Once
// the stream has expired, the log recorded with the version is what is served.
const LOG_TTL_S = 24 * 3600;
// Lines kept in the stream (and in the recorded log): the newest.
export const MAX_LOG_LINES = 20_000;
const POLL_MS = 200;

export function templateLogKey(templateId: string, version: number): string {
  return `drydock:template-log:${templateId}:${version}`;
}

export type TemplateLogEvent = { event: 'log'; data: { line: string } } | { event: 'done'; data: { status: TemplateVersionStatus; error?: string | null } };

@Injectable()
export class TemplateBuildLogs {
  constructor(@Inject(REDIS) private readonly redis: Redis) {}

  async append(templateId: string, version: number, lines: string[]): Promise<void> {
    if (lines.length === 0) return;
    const key = templateLogKey(templateId, version);
    const pipeline = this.redis.pipeline();
    for (const line of lines) pipeline.xadd(key, 'MAXLEN', '~', String(MAX_LOG_LINES), '*', 'line', line);
    pipeline.expire(key, LOG_TTL_S);
    await pipeline.exec();
  }

  async finish(templateId: string, version: number, status: TemplateVersionStatus, error: string | null): Promise<void> {
    const key = templateLogKey(templateId, version);
    await this.redis.pipeline().xadd(key, '*', 'done', status, 'error', error ?? '').expire(key, LOG_TTL_S).exec();
  }

  // Every line from the first, as the worker adds them, then `done`. `recorded` is the
  // version's status and log from the database, asked for when the stream has none:
  // a build that ended more than a day ago, or one whose worker never started it.
  async *follow(
    templateId: string,
    version: number,
    recorded: () => Promise<{ status: TemplateVersionStatus; error: string | null; log: string | null }>,
    signal: AbortSignal,
  ): AsyncGenerator<TemplateLogEvent> {
    const key = templateLogKey(templateId, version);
    let after = '0';
    let seen = false;
    while (!signal.aborted) {
      const entries = (await this.redis.xrange(key, after === '0' ? '-' : `(${after}`, '+', 'COUNT', 1000)) as [string, string[]][];
      for (const [id, fields] of entries) {
        seen = true;
        after = id;
        if (fields[0] === 'line') yield { event: 'log', data: { line: fields[1] ?? '' } };
        else if (fields[0] === 'done') {
          yield { event: 'done', data: { status: fields[1] as TemplateVersionStatus, error: fields[3] || null } };
          return;
        }
      }
      if (entries.length > 0) continue;
      if (!seen) {
        const version = await recorded();
        if (version.status !== 'building') {
          for (const line of (version.log ?? '').split('\n').filter((l, i, all) => l !== '' || i < all.length - 1)) yield { event: 'log', data: { line } };
          yield { event: 'done', data: { status: version.status, error: version.error } };
          return;
        }
      }
      await new Promise((resolve) => setTimeout(resolve, POLL_MS));
    }
  }
}
