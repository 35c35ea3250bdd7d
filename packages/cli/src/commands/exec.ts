import { InvalidArgumentError, type Command } from 'commander';
import type { CommandResult } from '@drydock/client';
import { positiveInt, threadId, type Context } from '../context.js';
import { ExitCode, usageError } from '../exit-codes.js';
import { interruptible } from '../interrupt.js';
import type { Io } from '../io.js';
import { printJson } from '../output.js';
import { ALLOW_HELP, allowEntry, networkOf, SESSION_ID, warnIfOtherNetwork } from './network.js';
import { templateRef, warnIfOtherTemplate } from './templates.js';

// The platform's limit on a command's stdin (CreateCommandDto's MAX_STDIN_CHARS).
const MAX_STDIN_CHARS = 1024 * 1024;
// UTF-8 needs at most 3 bytes for each UTF-16 unit: reading stops past this many bytes,
// so that `yes | drydock exec …` fails at once instead of filling memory.
const MAX_STDIN_BYTES = 3 * MAX_STDIN_CHARS;

// The sandbox is Linux: a shell there reports a process killed by a signal as 128 + its
// Linux number, whatever platform the CLI runs on.
const LINUX_SIGNALS: Record<string, number> = {
  SIGHUP: 1, SIGINT: 2, SIGQUIT: 3, SIGILL: 4, SIGTRAP: 5, SIGABRT: 6, SIGBUS: 7, SIGFPE: 8, SIGKILL: 9, SIGUSR1: 10, SIGSEGV: 11,
  SIGUSR2: 12, SIGPIPE: 13, SIGALRM: 14, SIGTERM: 15, SIGSTKFLT: 16, SIGCHLD: 17, SIGCONT: 18, SIGSTOP: 19, SIGTSTP: 20, SIGTTIN: 21,
  SIGTTOU: 22, SIGURG: 23, SIGXCPU: 24, SIGXFSZ: 25, SIGVTALRM: 26, SIGPROF: 27, SIGWINCH: 28, SIGIO: 29, SIGPWR: 30, SIGSYS: 31,
};

// What the platform runs: one argument with whitespace in it is a shell line (`drydock
// exec … -- 'ls | wc -l'`), anything else a program and its arguments, run without a shell.
export function commandOf(args: string[]): string | string[] {
  return args.length === 1 && /\s/.test(args[0]!) ? args[0]! : args;
}

// The exit code a shell would give: the command's own, 128 + the signal's number when a
// signal ended it; 1 when the platform stopped it (time limit, out of memory, killed), as
// `drydock run` does for a run.
export function exitCodeOf(result: CommandResult): number {
  if (result.status === 'ok') return ExitCode.Ok;
  if (result.status !== 'error') return ExitCode.Failed;
  if (result.exitCode !== null && result.exitCode !== undefined) return result.exitCode;
  const signal = result.signal ? LINUX_SIGNALS[result.signal] : undefined;
  return signal ? 128 + signal : ExitCode.Failed;
}

// KEY=VALUE, repeatable: the variables collect in one object.
function envEntry(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const equals = value.indexOf('=');
  if (equals <= 0) throw new InvalidArgumentError('--env takes NAME=VALUE (e.g. --env MODE=fast).');
  return { ...previous, [value.slice(0, equals)]: value.slice(equals + 1) };
}

// Sandbox paths: /session/src as it is, a relative one from /session (src → /session/src).
const sandboxCwd = (cwd: string) => (cwd.startsWith('/') ? cwd : `/session/${cwd}`);

export function registerExec(program: Command, ctx: Context): void {
  program
    .command('exec')
    .description("run a shell command or a program in a session's sandbox, streaming its output")
    .argument('<args...>', 'the session id (without --thread), then -- and the command')
    .usage('<session-id | --thread T> [options] -- <command> [args...]')
    .option('-t, --thread <id>', "run in this thread's session, creating it if the thread has no live one", threadId)
    .option('--cwd <dir>', 'where it starts: /session (default) or a folder under it; a relative path is from /session')
    .option('-e, --env <name=value>', 'a variable for the command (repeatable)', envEntry)
    .option('--timeout <ms>', "the command's time limit in milliseconds (default: the session's)", positiveInt('--timeout'))
    .option('--template <name[:version]>', "with --thread: start the thread's session from this template (when it has no live one)", templateRef)
    .option('--allow <host>', `with --thread: ${ALLOW_HELP}; applies when the thread has no live session`, allowEntry)
    .option('--no-stdin', "do not read stdin (by default, when stdin is not a terminal, it is read whole and given to the command)")
    .addHelpText(
      'after',
      "\nOne argument after -- with spaces in it is a shell line for /bin/bash -c (drydock exec ses_… -- 'ls | wc -l');" +
        ' several are a program and its arguments, run without a shell (drydock exec ses_… -- ls -la /session).' +
        '\nCtrl-C sends SIGINT to the command; a second Ctrl-C stops waiting.' +
        "\nExit code: the command's own (128 + the signal's number when a signal ended it, as in a shell);" +
        ' 1 when it reached its time limit, ran out of memory or was killed.',
    )
    .action(async (args: string[], _options: unknown, command: Command) => {
      const options = ctx.options<{ thread?: string; cwd?: string; env?: Record<string, string>; timeout?: number; stdin: boolean; template?: string; allow?: string[] }>(command);
      const [target, rest] = options.thread ? [undefined, args] : [args[0], args.slice(1)];
      if (target !== undefined && !SESSION_ID.test(target)) {
        command.error(`error: "${target}" is not a session id (ses_…): give one, or --thread T, before -- and the command.`);
      }
      if (options.thread && SESSION_ID.test(args[0]!)) {
        command.error('error: give a session id or --thread, not both.');
      }
      if (options.template && !options.thread) command.error('error: --template starts a new session: use it with --thread, not a session id.');
      if (options.allow && !options.thread) command.error('error: --allow starts a new session with network: use it with --thread, not a session id (drydock network narrow narrows a live one).');
      if (rest.length === 0) command.error('error: no command: put it after --, e.g. drydock exec ses_… -- ls -la');
      // Configuration first: a missing key must not wait for stdin to be read.
      const client = ctx.client(command);
      const stdin = options.stdin ? await readStdin(ctx.io) : undefined;
      // Creating a session for a thread that has a live one returns that one.
      const session = options.thread
        ? await client.sessions.create({ threadId: options.thread, template: options.template, ...networkOf(options.allow) })
        : await client.sessions.get(target!);
      warnIfOtherTemplate(ctx.io, options.template, session);
      warnIfOtherNetwork(ctx.io, options.allow, session);
      const { stdout, stderr } = ctx.io;
      // With --json the record is printed whole at the end instead of streamed.
      const streamed = options.json ? {} : { onStdout: (text: string) => stdout.write(text), onStderr: (text: string) => stderr.write(text) };
      const { value: result } = await interruptible(session, ctx.io, 'command', (signal) =>
        session.commands.run(commandOf(rest), {
          cwd: options.cwd === undefined ? undefined : sandboxCwd(options.cwd),
          env: options.env,
          stdin,
          timeoutMs: options.timeout,
          signal,
          ...streamed,
        }),
      );
      if (options.json) printJson(stdout, result);
      else printOutcome(result, ctx);
      ctx.exitCode = exitCodeOf(result);
    });
}

// Piped or redirected stdin goes to the command (as UTF-8 text); a terminal's does not,
// or the CLI would wait for an end of file nobody means to type. Empty is the same as none.
async function readStdin(io: Io): Promise<string | undefined> {
  if ((io.stdin as { isTTY?: boolean }).isTTY) return undefined;
  const chunks: Buffer[] = [];
  let bytes = 0;
  for await (const chunk of io.stdin) {
    const buffer = typeof chunk === 'string' ? Buffer.from(chunk) : (chunk as Buffer);
    bytes += buffer.byteLength;
    if (bytes > MAX_STDIN_BYTES) break;
    chunks.push(buffer);
  }
  const text = Buffer.concat(chunks).toString('utf8');
  if (bytes > MAX_STDIN_BYTES || text.length > MAX_STDIN_CHARS) {
    throw usageError('STDIN_TOO_LARGE', 'stdin is larger than the 1 MiB a command may be given: put the data in a file (drydock files put) and read it there, or pass --no-stdin.');
  }
  return text === '' ? undefined : text;
}

// What the stream does not say: that output was cut, or why the platform ended the command.
function printOutcome(result: CommandResult, ctx: Context): void {
  const { stderr } = ctx.io;
  if (result.truncated) stderr.write('drydock: output was truncated at the session limit\n');
  if (result.status === 'ok' || result.status === 'error') return;
  const reason = result.error ? `${result.error.name}: ${result.error.value}` : `the command ended with status ${result.status}`;
  stderr.write(`drydock: ${reason}\n`);
}
