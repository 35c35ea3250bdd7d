import type { Command } from 'commander';
import { Drydock } from '@drydock/client';
import { checkUrl, configPath, DEFAULT_URL, forgetLogin, readLogin, saveLogin } from '../config.js';
import type { Context } from '../context.js';
import { CliError, ExitCode } from '../exit-codes.js';
import type { Io } from '../io.js';
import { printJson } from '../output.js';

// The key from the first of: --api-key, DRYDOCK_API_KEY, piped stdin (its first line),
// a prompt on the terminal that does not echo what is typed.
async function keyToSave(io: Io, flag: string | undefined): Promise<string> {
  const given = flag || io.env.DRYDOCK_API_KEY;
  if (given) return given;
  const stdin = io.stdin as NodeJS.ReadStream;
  const key = stdin.isTTY ? await promptHidden(stdin, io, 'API key (ddk_…): ') : await firstLine(stdin);
  if (!key) throw new CliError(ExitCode.Config, 'MISSING_API_KEY', 'No API key given: type it when asked, pipe it in (drydock login < key.txt), or set DRYDOCK_API_KEY.');
  return key;
}

async function firstLine(stdin: NodeJS.ReadableStream): Promise<string> {
  let text = '';
  for await (const chunk of stdin) {
    text += chunk.toString();
    if (text.includes('\n')) break;
  }
  return text.split('\n')[0]!.trim();
}

// Reads a line in raw mode, echoing nothing; Ctrl-C gives up (exit 130). Raw mode goes on
// before the prompt is shown: a key typed as soon as the prompt appears must not reach a
// terminal that still echoes.
function promptHidden(stdin: NodeJS.ReadStream, io: Io, question: string): Promise<string> {
  stdin.setRawMode(true);
  io.stderr.write(question);
  return new Promise((resolve, reject) => {
    let typed = '';
    const done = (error: Error | null) => {
      stdin.removeListener('data', onData);
      stdin.setRawMode(false);
      stdin.pause();
      io.stderr.write('\n');
      if (error) reject(error);
      else resolve(typed.trim());
    };
    const onData = (data: Buffer) => {
      for (const char of data.toString('utf8')) {
        if (char === '\r' || char === '\n') return done(null);
        if (char === '\u0003') return done(new CliError(ExitCode.Interrupted, 'INTERRUPTED', 'Login cancelled.'));
        if (char === '\u007f' || char === '\b') typed = typed.slice(0, -1);
        else typed += char;
      }
    };
    stdin.resume();
    stdin.on('data', onData);
  });
}

export function registerLogin(program: Command, ctx: Context): void {
  program
    .command('login')
    .description('save a gateway URL and a tenant API key for later commands (a file only you can read)')
    .option('--no-verify', 'save without checking the key against the gateway')
    .addHelpText(
      'after',
      '\nThe URL is --url, else DRYDOCK_URL, else the one saved before, else ' +
        DEFAULT_URL +
        '. The key is --api-key, else DRYDOCK_API_KEY, else the first line of stdin when it is piped' +
        ' (drydock login < key.txt), else typed at a prompt that does not echo it.' +
        '\nThe key is checked against the gateway first (an unknown key: INVALID_API_KEY, exit 3, nothing saved), then saved with' +
        ' the URL in $XDG_CONFIG_HOME/drydock/config.json (default ~/.config/drydock/config.json), mode 0600.' +
        '\nLater commands use it when neither a flag nor a variable gives a key, and only for that URL. drydock logout removes it.',
    )
    .action(async (_options: unknown, command: Command) => {
      const options = ctx.options<{ verify: boolean }>(command);
      // A broken saved file must not stop a new login from replacing it.
      const previous = (() => {
        try {
          return readLogin(ctx.io.env);
        } catch {
          return null;
        }
      })();
      const url = checkUrl(options.url || ctx.io.env.DRYDOCK_URL || previous?.url || DEFAULT_URL);
      const apiKey = await keyToSave(ctx.io, options.apiKey);
      if (options.verify) await new Drydock({ url, apiKey, retry: { attempts: 1 } }).sessions.list();
      const path = saveLogin(ctx.io.env, { url, apiKey });
      if (options.json) return printJson(ctx.io.stdout, { url, path });
      ctx.io.stderr.write(`Logged in to ${url}; the key is saved in ${path}\n`);
    });

  program
    .command('logout')
    .description('remove what drydock login saved')
    .action((_options: unknown, command: Command) => {
      const { path, removed } = forgetLogin(ctx.io.env);
      if (ctx.options(command).json) return printJson(ctx.io.stdout, { path, removed });
      ctx.io.stderr.write(removed ? `Removed ${path}\n` : `Nothing saved (${configPath(ctx.io.env)})\n`);
    });
}
