import type { Command } from 'commander';
import WebSocket from 'ws';
import type { WebSocketConstructor } from '@drydock/client';
import { threadId, type Context } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import { ALLOW_HELP, allowEntry, networkOf, SESSION_ID, warnIfOtherNetwork } from './network.js';
import { templateRef, warnIfOtherTemplate } from './templates.js';

type Tty = NodeJS.ReadableStream & { isTTY?: boolean; setRawMode?: (raw: boolean) => unknown };
type TtyOut = NodeJS.WritableStream & { isTTY?: boolean; columns?: number; rows?: number; on?: (event: 'resize', listener: () => void) => unknown; off?: (event: 'resize', listener: () => void) => unknown };

// `drydock shell`: an interactive terminal in a session's sandbox (GET
// /v1/sessions/:id/pty), as ssh gives one: the local terminal in raw mode, every
// keystroke sent as it is typed (Ctrl-C included, for the program in front over there),
// the window size sent again on SIGWINCH, and the shell's exit code as ours.
export function registerShell(program: Command, ctx: Context): void {
  program
    .command('shell')
    .description("an interactive shell (bash) in a session's sandbox, on a pseudo-terminal")
    .argument('[session-id]', 'the session (or --thread)')
    .option('-t, --thread <id>', "the thread's session, creating it if the thread has no live one", threadId)
    .option('--template <name[:version]>', "with --thread: start the thread's session from this template (when it has no live one)", templateRef)
    .option('--allow <host>', `with --thread: ${ALLOW_HELP}; applies when the thread has no live session`, allowEntry)
    .addHelpText(
      'after',
      '\nKeys go to the remote shell as typed (Ctrl-C interrupts what runs there); `exit` or Ctrl-D ends it.' +
        "\nExit code: the shell's own; 1 when it ended by a signal or with its session.",
    )
    .action(async (target: string | undefined, _options: unknown, command: Command) => {
      const options = ctx.options<{ thread?: string; template?: string; allow?: string[] }>(command);
      if (!options.thread && (target === undefined || !SESSION_ID.test(target))) {
        command.error(`error: ${target === undefined ? 'no session' : `"${target}" is not a session id (ses_…)`}: give one, or --thread T.`);
      }
      if (options.thread && target !== undefined) command.error('error: give a session id or --thread, not both.');
      if (options.template && !options.thread) command.error('error: --template starts a new session: use it with --thread, not a session id.');
      if (options.allow && !options.thread) command.error('error: --allow starts a new session with network: use it with --thread, not a session id.');
      const client = ctx.client(command);
      const session = options.thread
        ? await client.sessions.create({ threadId: options.thread, template: options.template, ...networkOf(options.allow) })
        : await client.sessions.get(target!);
      warnIfOtherTemplate(ctx.io, options.template, session);
      warnIfOtherNetwork(ctx.io, options.allow, session);
      const stdin = ctx.io.stdin as Tty;
      const stdout = ctx.io.stdout as TtyOut;
      const size = () => ({ cols: stdout.isTTY && stdout.columns ? stdout.columns : 80, rows: stdout.isTTY && stdout.rows ? stdout.rows : 24 });
      const terminal = await session.pty({
        ...size(),
        WebSocket: WebSocket as unknown as WebSocketConstructor,
        onData: (bytes) => stdout.write(bytes),
      });
      const raw = stdin.isTTY === true && typeof stdin.setRawMode === 'function';
      if (raw) stdin.setRawMode!(true);
      const onInput = (chunk: Buffer | string) => terminal.write(typeof chunk === 'string' ? chunk : new Uint8Array(chunk));
      // Piped input: the terminal gets an end of file (Ctrl-D) once it is read.
      const onEnd = () => terminal.write('\x04');
      const onResize = () => {
        const { cols, rows } = size();
        terminal.resize(cols, rows);
      };
      stdin.on('data', onInput);
      stdin.on('end', onEnd);
      stdout.on?.('resize', onResize);
      stdin.resume();
      try {
        const exit = await terminal.exited;
        ctx.exitCode = exit.exitCode ?? ExitCode.Failed;
        if (exit.reason) ctx.io.stderr.write(`\r\ndrydock: ${exit.reason}\r\n`);
      } finally {
        stdin.off('data', onInput);
        stdin.off('end', onEnd);
        stdout.off?.('resize', onResize);
        if (raw) stdin.setRawMode!(false);
        stdin.pause();
      }
    });
}
