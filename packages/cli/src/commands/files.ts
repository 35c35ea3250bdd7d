import { posix } from 'node:path';
import type { Command } from 'commander';
import { threadId, type Context } from '../context.js';
import { usageError } from '../exit-codes.js';
import { openLocal, STDIO, writeLocalStream } from '../local-files.js';
import { formatBytes, printJson, table } from '../output.js';

// Thread paths are absolute ("/data/x.csv" is /session/data/x.csv in the sandbox);
// "data/x.csv" is taken to mean the same.
export const threadPath = (path: string) => (path.startsWith('/') ? path : `/${path}`);

export function registerFiles(program: Command, ctx: Context): void {
  const files = program
    .command('files')
    .description("a thread's files (what its sandbox sees under /session)")
    .addHelpText('after', '\nPaths are thread paths: /data/x.csv is /session/data/x.csv inside the sandbox.');

  files
    .command('ls')
    .description('list a folder of the thread')
    .argument('[path]', 'the folder', '/')
    .requiredOption('-t, --thread <id>', 'the thread', threadId)
    .action(async (path: string, _options: unknown, command: Command) => {
      const options = ctx.options<{ thread: string }>(command);
      const entries = await ctx.client(command).files(options.thread).ls(threadPath(path));
      if (options.json) return printJson(ctx.io.stdout, entries);
      if (entries.length === 0) return;
      const rows = entries.map((e) => [e.type === 'directory' ? 'dir' : 'file', e.type === 'directory' ? '-' : formatBytes(e.size), e.modifiedAt ?? '-', e.path]);
      ctx.io.stdout.write(table([['TYPE', 'SIZE', 'MODIFIED', 'PATH'], ...rows]));
    });

  files
    .command('put')
    .description('upload a local file (or - for stdin) to the thread')
    .argument('<local>', 'the local file, or -')
    .argument('<remote>', 'the thread path')
    .requiredOption('-t, --thread <id>', 'the thread', threadId)
    .action(async (local: string, remote: string, _options: unknown, command: Command) => {
      const options = ctx.options<{ thread: string }>(command);
      const thread = ctx.client(command).files(options.thread);
      // Streamed: a large file is sent as it is read, never whole in memory.
      const info = await thread.upload(threadPath(remote), await openLocal(local, ctx.io));
      if (options.json) printJson(ctx.io.stdout, info);
      else ctx.io.stdout.write(`${info.path}  ${formatBytes(info.size)}\n`);
    });

  files
    .command('rm')
    .description('delete files of the thread (a folder and everything under it with -r)')
    .argument('<paths...>', 'the thread paths')
    .requiredOption('-t, --thread <id>', 'the thread', threadId)
    .option('-r, --recursive', 'delete folders too, with everything in them')
    .addHelpText('after', '\nPrints each path it deleted. A missing path is FILE_NOT_FOUND (exit 3), a folder without -r IS_A_DIRECTORY (exit 2); the paths before it are deleted.')
    .action(async (paths: string[], _options: unknown, command: Command) => {
      const options = ctx.options<{ thread: string; recursive?: boolean }>(command);
      const thread = ctx.client(command).files(options.thread);
      const deleted: string[] = [];
      for (const path of paths.map(threadPath)) {
        // As rm does: a folder goes only when asked for (the API deletes one recursively).
        if (!options.recursive && (await thread.stat(path)).type === 'directory') {
          throw usageError('IS_A_DIRECTORY', `${path} is a folder: pass -r to delete it and everything in it.`);
        }
        await thread.delete(path);
        deleted.push(path);
        if (!options.json) ctx.io.stdout.write(`${path}\n`);
      }
      if (options.json) printJson(ctx.io.stdout, { deleted });
    });

  files
    .command('get')
    .description('download a file of the thread')
    .argument('<remote>', 'the thread path')
    .argument('[local]', 'where to write it, - for stdout (default: its name in the current folder)')
    .requiredOption('-t, --thread <id>', 'the thread', threadId)
    .action(async (remote: string, local: string | undefined, _options: unknown, command: Command) => {
      const options = ctx.options<{ thread: string }>(command);
      const path = threadPath(remote);
      const target = local ?? posix.basename(path);
      // Streamed: written as it arrives; a missing file fails before the local one is made.
      const size = await writeLocalStream(target, await ctx.client(command).files(options.thread).downloadStream(path), ctx.io);
      // On stdout the bytes are the output: nothing else may be mixed in.
      if (target === STDIO) return;
      if (options.json) printJson(ctx.io.stdout, { path, local: target, size });
      else ctx.io.stderr.write(`${path} → ${target}  ${formatBytes(size)}\n`);
    });
}
