import { basename, extname } from 'node:path';
import type { Command } from 'commander';
import type { Execution } from '@drydock/client';
import { positiveInt, threadId, type Context } from '../context.js';
import { ExitCode } from '../exit-codes.js';
import { interruptible } from '../interrupt.js';
import { readLocalText, STDIO } from '../local-files.js';
import { printJson } from '../output.js';
import { ALLOW_HELP, allowEntry, networkOf, warnIfOtherNetwork } from './network.js';
import { templateRef, warnIfOtherTemplate } from './templates.js';

// The thread a script runs in unless --thread says otherwise: the file's name without
// its extension (analysis.py → "analysis"), so running the same script again reuses its
// session (variables and files); stdin runs in "stdin".
export function threadForScript(script: string): string {
  if (script === STDIO) return 'stdin';
  const name = basename(script, extname(script))
    .replace(/[^A-Za-z0-9_.:-]+/g, '-')
    .replace(/^[^A-Za-z0-9]+/, '')
    .slice(0, 128);
  return name || 'script';
}

export function registerRun(program: Command, ctx: Context): void {
  program
    .command('run')
    .description("run a Python script in a thread's session, streaming its output")
    .argument('<script>', 'a .py file, or - for stdin')
    .option('-t, --thread <id>', 'the thread (default: the script name without .py; "stdin" for -)', threadId)
    .option('--timeout <ms>', "this run's time limit in milliseconds (default: the session's)", positiveInt('--timeout'))
    .option('--template <name[:version]>', 'start the session from this template (when the thread has no live session)', templateRef)
    .option('--allow <host>', `${ALLOW_HELP}; applies when the thread has no live session`, allowEntry)
    .addHelpText(
      'after',
      '\nCtrl-C interrupts the code (a KeyboardInterrupt in the session, whose variables stay) and exits 130 once it has stopped;' +
        ' a second Ctrl-C stops waiting at once.' +
        '\nExit code 0 when the code ran ok, 1 for a Python error, a timeout, out of memory or a killed run.',
    )
    .action(async (script: string, _options: unknown, command: Command) => {
      const options = ctx.options<{ thread?: string; timeout?: number; template?: string; allow?: string[] }>(command);
      // Configuration first: a missing key must not wait for stdin to be read.
      const client = ctx.client(command);
      const code = await readLocalText(script, ctx.io);
      // Creating a session for a thread that has a live one returns that one.
      const session = await client.sessions.create({ threadId: options.thread ?? threadForScript(script), template: options.template, ...networkOf(options.allow) });
      warnIfOtherTemplate(ctx.io, options.template, session);
      warnIfOtherNetwork(ctx.io, options.allow, session);
      const { stdout, stderr } = ctx.io;
      // With --json the record is printed whole at the end instead of streamed.
      const streamed = options.json ? {} : { onStdout: (text: string) => stdout.write(text), onStderr: (text: string) => stderr.write(text) };
      // Ctrl-C as in a local python: the code is interrupted and its traceback shown.
      const { value: execution, interrupted } = await interruptible(session, ctx.io, 'run', (signal) =>
        session.run(code, { timeoutMs: options.timeout, signal, ...streamed }),
      );
      if (options.json) printJson(stdout, execution);
      else printOutcome(execution, ctx);
      if (interrupted) ctx.exitCode = ExitCode.Interrupted;
      else if (execution.status !== 'ok') ctx.exitCode = ExitCode.Failed;
    });
}

// What the stream does not carry: a trailing expression's value (as the REPL shows it)
// and, for a failed run, the traceback or the reason it was stopped.
function printOutcome(execution: Execution, ctx: Context): void {
  const { stdout, stderr } = ctx.io;
  if (execution.result?.text) stdout.write(line(execution.result.text));
  if (execution.truncated) stderr.write('drydock: output was truncated at the session limit\n');
  // Scripts of one thread may rely on each other's variables: say when they are gone.
  if (execution.stateLost) stderr.write('drydock: the session was re-created before this run; variables from earlier runs are gone\n');
  if (execution.status === 'ok') return;
  stderr.write(failureOf(execution));
}

// Why a run failed, its last line naming the cause as Python would: the traceback of an
// exception (`error`); for a run the platform stopped, where the code was (the traceback
// the stop left, if any) and then the reason: `TimeoutError: execution exceeded the time
// limit of N ms`, `OutOfMemory: …` (memory), or what killed it (`killed`: an interrupt the
// code ignored, the Python process dying, its session or worker gone).
export function failureOf(execution: Execution): string {
  const error = execution.error;
  if (!error) return `drydock: the run ended with status ${execution.status}\n`;
  const reason = `${error.name}: ${error.value}\n`;
  if (execution.status === 'error') {
    if (!error.traceback) return reason;
    const interrupted = error.name === 'KeyboardInterrupt' ? 'drydock: the run was interrupted; the session keeps its variables\n' : '';
    return line(error.traceback) + interrupted;
  }
  // A timeout interrupts the code: its traceback ends with the KeyboardInterrupt that
  // stopped it, which is not the cause. The reason takes that line's place.
  const where = error.traceback.split('\n').filter((l) => l !== '');
  if (where.at(-1)?.startsWith('KeyboardInterrupt')) where.pop();
  return (where.length > 0 ? where.join('\n') + '\n' : '') + reason;
}

const line = (text: string) => (text.endsWith('\n') ? text : text + '\n');
