import type { Command } from 'commander';
import { threadId, type Context } from '../context.js';
import { printJson } from '../output.js';
import { ALLOW_HELP, allowEntry, networkOf, warnIfOtherNetwork } from './network.js';
import { templateRef, warnIfOtherTemplate } from './templates.js';

export function registerSessions(program: Command, ctx: Context): void {
  const sessions = program.command('sessions').description('sessions: a sandbox with a Python REPL for a thread');

  sessions
    .command('create')
    .description("start a session for a thread (or get its live one) and print its id")
    .option('-t, --thread <id>', 'the thread (default: a new one)', threadId)
    .option('--allow <host>', ALLOW_HELP, allowEntry)
    .option('--template <name[:version]>', 'start the session from this template', templateRef)
    .addHelpText(
      'after',
      '\nPrints the session id (ses_…) on stdout; with --json, the session. A thread that has a live session gets that one,' +
        ' as it is: --allow and --template apply to a session that is created (a warning on stderr says when they differ).' +
        '\nWithout --allow the sandbox has no network; drydock network <session> shows its policy and connections.',
    )
    .action(async (_options: unknown, command: Command) => {
      const options = ctx.options<{ thread?: string; allow?: string[]; template?: string }>(command);
      const session = await ctx.client(command).sessions.create({ threadId: options.thread, template: options.template, ...networkOf(options.allow) });
      warnIfOtherTemplate(ctx.io, options.template, session);
      warnIfOtherNetwork(ctx.io, options.allow, session);
      if (options.json) printJson(ctx.io.stdout, session.info);
      else ctx.io.stdout.write(`${session.id}\n`);
    });
}
