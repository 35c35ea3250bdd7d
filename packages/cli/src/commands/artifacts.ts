import { basename } from 'node:path';
import type { Command } from 'commander';
import { positiveInt, threadId, type Context } from '../context.js';
import { STDIO, writeLocalStream } from '../local-files.js';
import { formatBytes, printJson, table } from '../output.js';

export function registerArtifacts(program: Command, ctx: Context): void {
  const artifacts = program.command('artifacts').description('files the code left in /session/artifacts/ (plots, CSVs, reports)');

  artifacts
    .command('ls')
    .description("list the tenant's artifacts, newest first")
    .option('-t, --thread <id>', "only this thread's", threadId)
    .option('--batch <id>', "only this batch's")
    .option('--limit <n>', 'at most this many (default 100)', positiveInt('--limit'))
    .action(async (_options: unknown, command: Command) => {
      const options = ctx.options<{ thread?: string; batch?: string; limit?: number }>(command);
      const list = await ctx.client(command).artifacts.list({ threadId: options.thread, batchId: options.batch, limit: options.limit });
      if (options.json) return printJson(ctx.io.stdout, list);
      if (list.length === 0) return;
      const rows = list.map((a) => [a.id, formatBytes(a.size), a.mime, a.createdAt, a.threadId ?? (a.batchId ? `${a.batchId}#${a.batchItem}` : '-'), a.name]);
      ctx.io.stdout.write(table([['ID', 'SIZE', 'TYPE', 'CREATED', 'FROM', 'NAME'], ...rows]));
    });

  artifacts
    .command('get')
    .description('download an artifact')
    .argument('<id>', 'the artifact id (art_…)')
    .argument('[local]', "where to write it, - for stdout (default: the artifact's name in the current folder)")
    .action(async (id: string, local: string | undefined, _options: unknown, command: Command) => {
      const options = ctx.options(command);
      const client = ctx.client(command);
      // basename: a name is the platform's, never a path to write outside the folder.
      const target = local ?? basename((await client.artifacts.get(id)).name);
      const size = await writeLocalStream(target, await client.artifacts.downloadStream(id), ctx.io);
      if (target === STDIO) return;
      if (options.json) printJson(ctx.io.stdout, { id, local: target, size });
      else ctx.io.stderr.write(`${id} → ${target}  ${formatBytes(size)}\n`);
    });

  artifacts
    .command('url')
    .description('a link that downloads the artifact without an API key until it expires')
    .argument('<id>', 'the artifact id (art_…)')
    .option('--ttl <seconds>', 'how long the link works', positiveInt('--ttl'))
    .action(async (id: string, _options: unknown, command: Command) => {
      const options = ctx.options<{ ttl?: number }>(command);
      const signed = await ctx.client(command).artifacts.signedUrl(id, { ttlSeconds: options.ttl });
      if (options.json) printJson(ctx.io.stdout, signed);
      else ctx.io.stdout.write(`${signed.url}\n`);
    });
}
