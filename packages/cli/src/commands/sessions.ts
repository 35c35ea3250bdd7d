import { InvalidArgumentError, type Command } from 'commander';
import type { Session, SessionInfo } from '@drydock/client';
import { threadId, type Context } from '../context.js';
import { printJson, table } from '../output.js';
import { ALLOW_HELP, allowEntry, checkTarget, describePolicy, logTime, namedSession, networkOf, warnIfOtherNetwork } from './network.js';
import { templateRef, warnIfOtherTemplate } from './templates.js';

const orDash = (value: string | null | undefined) => (value ? logTime(value) : '-');

function tierName(value: string): 'runc' | 'gvisor' {
  if (value !== 'runc' && value !== 'gvisor') throw new InvalidArgumentError('a tier is runc or gvisor.');
  return value;
}

// One session, a field a line (sessions get).
export function describeSession(info: SessionInfo): string {
  const { limits } = info;
  return table([
    ['session', info.id],
    ['thread', info.threadId],
    ['status', info.status + (info.endReason ? ` (${info.endReason})` : '') + (info.hibernatedAt ? ` since ${logTime(info.hibernatedAt)}` : '')],
    ['tier', info.tier],
    ['worker', info.workerId],
    ['template', info.template ?? 'the platform image'],
    ['network', describePolicy(info.network)],
    ['limits', `${limits.memoryMb} MiB, ${limits.cpus} CPU, ${limits.timeoutMs} ms a run, ${limits.pids} processes, ${limits.sessionDiskMb} MiB disk`],
    ['storage', info.storage + (info.datasets.length ? `, datasets ${info.datasets.map((d) => `${d.name} (${d.mode})`).join(', ')}` : '')],
    ['created', logTime(info.createdAt)],
    ['last used', orDash(info.lastUsedAt)],
    ['expires', orDash(info.expiresAt)],
    ...(info.endedAt ? [['ended', logTime(info.endedAt)]] : []),
  ]);
}

export function registerSessions(program: Command, ctx: Context): void {
  const sessions = program.command('sessions').description('sessions: a sandbox with a Python REPL for a thread');

  sessions
    .command('create')
    .description("start a session for a thread (or get its live one) and print its id")
    .option('-t, --thread <id>', 'the thread (default: a new one)', threadId)
    .option('--allow <host>', ALLOW_HELP, allowEntry)
    .option('--template <name[:version]>', 'start the session from this template', templateRef)
    .option('--tier <tier>', 'runc, or gvisor: a session that can hibernate and be snapshotted (where the deployment offers it)', tierName)
    .option('--from-snapshot <snapshot-id>', 'fork: start from a snapshot (its variables, processes, files and settings), on --thread or a new thread')
    .addHelpText(
      'after',
      '\nPrints the session id (ses_…) on stdout; with --json, the session. A thread that has a live session gets that one,' +
        ' as it is: --allow and --template apply to a session that is created (a warning on stderr says when they differ).' +
        '\nWithout --allow the sandbox has no network; drydock network <session> shows its policy and connections.',
    )
    .action(async (_options: unknown, command: Command) => {
      const options = ctx.options<{ thread?: string; allow?: string[]; template?: string; tier?: 'runc' | 'gvisor'; fromSnapshot?: string }>(command);
      if (options.fromSnapshot && (options.allow || options.template || options.tier)) {
        command.error('error: a fork takes its snapshot\'s settings: --from-snapshot goes with --thread only.');
      }
      const client = ctx.client(command);
      const session = options.fromSnapshot
        ? await client.sessions.fork(options.fromSnapshot, { threadId: options.thread })
        : await client.sessions.create({ threadId: options.thread, template: options.template, ...networkOf(options.allow), ...(options.tier ? { tier: options.tier } : {}) });
      warnIfOtherTemplate(ctx.io, options.template, session);
      warnIfOtherNetwork(ctx.io, options.allow, session);
      if (options.json) printJson(ctx.io.stdout, session.info);
      else ctx.io.stdout.write(`${session.id}\n`);
    });

  sessions
    .command('ls')
    .description("list the tenant's live sessions (with --all, ended ones too)")
    .option('-a, --all', 'ended sessions too')
    .option('-t, --thread <id>', "only this thread's", threadId)
    .addHelpText('after', '\nPrints ID THREAD STATUS TEMPLATE NETWORK CREATED LAST-USED, newest first; nothing when there are none. With --json, the sessions.')
    .action(async (_options: unknown, command: Command) => {
      const options = ctx.options<{ all?: boolean; thread?: string }>(command);
      const listed = await ctx.client(command).sessions.list({ includeEnded: options.all });
      const infos = listed.map((s) => s.info).filter((s) => !options.thread || s.threadId === options.thread);
      if (options.json) return printJson(ctx.io.stdout, infos);
      if (infos.length === 0) return;
      const rows = infos.map((s) => [s.id, s.threadId, s.status, s.template ?? '-', s.network ? s.network.allow.join(',') || '(none)' : '-', logTime(s.createdAt), orDash(s.lastUsedAt)]);
      ctx.io.stdout.write(table([['ID', 'THREAD', 'STATUS', 'TEMPLATE', 'NETWORK', 'CREATED', 'LAST-USED'], ...rows]));
    });

  sessions
    .command('get')
    .description('show a session: its status, worker, template, network and limits')
    .argument('[session-id]', 'the session (or --thread)')
    .option('-t, --thread <id>', "the thread's live session", threadId)
    .action(async (id: string | undefined, _options: unknown, command: Command) => {
      const options = ctx.options<{ thread?: string }>(command);
      checkTarget(command, id, options.thread);
      const session = await namedSession(ctx.client(command), id, options.thread);
      if (options.json) return printJson(ctx.io.stdout, session.info);
      ctx.io.stdout.write(describeSession(session.info));
    });

  sessions
    .command('hibernate')
    .description('hibernate a gvisor session: its memory, processes and files are checkpointed and its container removed; the next run resumes it')
    .argument('[session-id]', 'the session (or --thread)')
    .option('-t, --thread <id>', "the thread's live session", threadId)
    .addHelpText('after', '\nPrints the session id. A runc session cannot hibernate: CHECKPOINT_NOT_AVAILABLE (exit 1).')
    .action(async (id: string | undefined, _options: unknown, command: Command) => {
      const options = ctx.options<{ thread?: string }>(command);
      checkTarget(command, id, options.thread);
      const session = await namedSession(ctx.client(command), id, options.thread);
      const info = await session.hibernate();
      if (options.json) return printJson(ctx.io.stdout, info);
      ctx.io.stdout.write(`${info.id}\n`);
    });

  sessions
    .command('rm')
    .description("end sessions: their sandboxes go, the threads' files stay")
    .argument('[session-ids...]', 'the sessions (or --thread)')
    .option('-t, --thread <id>', "the thread's live session", threadId)
    .addHelpText('after', '\nPrints each id it ended. An unknown id is SESSION_NOT_FOUND (exit 3); the ones before it are ended.')
    .action(async (ids: string[], _options: unknown, command: Command) => {
      const options = ctx.options<{ thread?: string }>(command);
      if (options.thread && ids.length > 0) command.error('error: give session ids or --thread, not both.');
      for (const id of ids.length > 0 ? ids : [undefined]) checkTarget(command, id, options.thread);
      const client = ctx.client(command);
      const ended: string[] = [];
      for (const id of ids.length > 0 ? ids : [undefined]) {
        const session: Session = options.thread ? await namedSession(client, undefined, options.thread) : await client.sessions.get(id!);
        await session.delete();
        ended.push(session.id);
        if (!options.json) ctx.io.stdout.write(`${session.id}\n`);
      }
      if (options.json) printJson(ctx.io.stdout, { ended });
    });
}
