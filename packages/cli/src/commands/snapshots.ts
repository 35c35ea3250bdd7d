import type { Command } from 'commander';
import type { Snapshot } from '@drydock/client';
import { threadId, type Context } from '../context.js';
import { printJson, table } from '../output.js';
import { checkTarget, logTime, namedSession } from './network.js';

const mib = (bytes: number) => `${(bytes / 1024 / 1024).toFixed(1)} MiB`;

function row(s: Snapshot): string[] {
  return [s.id, s.sessionId, mib(s.sizeBytes), logTime(s.createdAt), s.expiresAt ? logTime(s.expiresAt) : '-'];
}

const HEADERS = ['ID', 'SESSION', 'SIZE', 'CREATED', 'EXPIRES'];

// Snapshots of gvisor sessions (docs/sessions.md); a fork is
// `drydock sessions create --from-snapshot <id>`.
export function registerSnapshots(program: Command, ctx: Context): void {
  const snapshots = program.command('snapshots').description('snapshots of gvisor sessions, to fork new sessions from');

  snapshots
    .command('create')
    .description("snapshot a session between runs (its variables, processes and files); the session goes on")
    .argument('[session-id]', 'the session (or --thread)')
    .option('-t, --thread <id>', "the thread's live session", threadId)
    .option('--ttl <seconds>', 'keep it this long (at most, and by default, the deployment\'s retention)', (v: string) => Number.parseInt(v, 10))
    .addHelpText('after', '\nPrints the snapshot id (snp_…). Past the tenant\'s quota: SNAPSHOT_QUOTA_EXCEEDED; a runc session: CHECKPOINT_NOT_AVAILABLE.')
    .action(async (id: string | undefined, _options: unknown, command: Command) => {
      const options = ctx.options<{ thread?: string; ttl?: number }>(command);
      checkTarget(command, id, options.thread);
      const session = await namedSession(ctx.client(command), id, options.thread);
      const snapshot = await session.snapshot(options.ttl ? { ttlSeconds: options.ttl } : {});
      if (options.json) return printJson(ctx.io.stdout, snapshot);
      ctx.io.stdout.write(`${snapshot.id}\n`);
    });

  snapshots
    .command('ls')
    .description("list the tenant's snapshots, newest first")
    .action(async (_options: unknown, command: Command) => {
      const options = ctx.options(command);
      const listed = await ctx.client(command).snapshots.list();
      if (options.json) return printJson(ctx.io.stdout, listed);
      if (listed.length > 0) ctx.io.stdout.write(table([HEADERS, ...listed.map(row)]));
    });

  snapshots
    .command('get')
    .description('show a snapshot')
    .argument('<snapshot-id>')
    .action(async (id: string, _options: unknown, command: Command) => {
      const options = ctx.options(command);
      const snapshot = await ctx.client(command).snapshots.get(id);
      if (options.json) return printJson(ctx.io.stdout, snapshot);
      ctx.io.stdout.write(table([HEADERS, row(snapshot)]));
    });

  snapshots
    .command('rm')
    .description('delete snapshots (sessions forked from them go on)')
    .argument('<snapshot-ids...>')
    .addHelpText('after', '\nPrints each id it deleted. An unknown id is SNAPSHOT_NOT_FOUND (exit 3); the ones before it are deleted.')
    .action(async (ids: string[], _options: unknown, command: Command) => {
      const options = ctx.options(command);
      const client = ctx.client(command);
      for (const id of ids) {
        await client.snapshots.delete(id);
        if (!options.json) ctx.io.stdout.write(`${id}\n`);
      }
      if (options.json) printJson(ctx.io.stdout, { deleted: ids });
    });
}
