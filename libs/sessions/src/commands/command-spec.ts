import { posix } from 'node:path';
import { DrydockError } from '@drydock/core';
import type { CommandSpec } from '@drydock/execution';

// What a caller asks to run (POST /v1/sessions/:id/commands): a shell line for
// /bin/bash -c, or an argv run as it is.
export interface CommandInput {
  command?: string;
  argv?: string[];
  cwd?: string;
  env?: Record<string, string>;
  stdin?: string;
}

export const SESSION_ROOT = '/session';
export const MAX_ENV_VARS = 256;
// POSIX's portable names; anything else could not be exported by a shell either.
const ENV_NAME = /^[A-Za-z_][A-Za-z0-9_]{0,255}$/;
// The platform's own variables in the sandbox (the image's DRYDOCK_* ids, and what the
// supervisor sets for every process): a command cannot change who it runs as or where
// its home is.
const RESERVED_ENV_PREFIX = 'DRYDOCK_';
const RESERVED_ENV = new Set(['HOME', 'USER', 'LOGNAME']);

export class CommandError extends DrydockError {
  static invalid(message: string) {
    return new CommandError('INVALID_COMMAND', message, 400);
  }
  static invalidCwd(cwd: string) {
    return new CommandError('INVALID_CWD', `cwd "${cwd}" is not a folder under /session; give an absolute path such as /session/src.`, 400);
  }
  static invalidEnv(message: string) {
    return new CommandError('INVALID_ENV', message, 400);
  }
}

// The process to start, checked: exactly one of `command` and `argv`; a cwd inside
// /session (normalised; the command runs as the sandbox user, so this is the contract's
// promise of where it starts, not a security boundary); variable names a shell accepts
// and none of the platform's own.
export function commandSpecOf(input: CommandInput): CommandSpec {
  const hasCommand = input.command !== undefined;
  const hasArgv = input.argv !== undefined;
  if (hasCommand === hasArgv) throw CommandError.invalid('Give either `command` (a line for /bin/bash -c) or `argv` (a program and its arguments), not both or neither.');
  if (hasArgv && input.argv!.length === 0) throw CommandError.invalid('`argv` needs at least the program to run.');
  const argv = hasCommand ? ['/bin/bash', '-c', input.command!] : [...input.argv!];
  if (argv.some((arg) => arg.includes('\u0000'))) throw CommandError.invalid('A command or argument cannot contain a NUL character.');
  const cwd = cwdOf(input.cwd);
  const env: Record<string, string> = {};
  const entries = Object.entries(input.env ?? {});
  if (entries.length > MAX_ENV_VARS) throw CommandError.invalidEnv(`At most ${MAX_ENV_VARS} variables may be set; ${entries.length} were given.`);
  for (const [name, value] of entries.sort(([a], [b]) => (a < b ? -1 : a > b ? 1 : 0))) {
    if (!ENV_NAME.test(name)) throw CommandError.invalidEnv(`"${name}" is not a variable name: letters, digits and _, not starting with a digit.`);
    if (name.startsWith(RESERVED_ENV_PREFIX) || RESERVED_ENV.has(name)) {
      throw CommandError.invalidEnv(`${name} is set by the platform and cannot be overridden.`);
    }
    if (typeof value !== 'string' || value.includes('\u0000')) throw CommandError.invalidEnv(`The value of ${name} must be a string without NUL characters.`);
    env[name] = value;
  }
  return { argv, cwd, env, ...(input.stdin !== undefined ? { stdin: input.stdin } : {}) };
}

function cwdOf(cwd: string | undefined): string {
  if (cwd === undefined || cwd === '') return SESSION_ROOT;
  if (!cwd.startsWith('/') || cwd.includes('\u0000')) throw CommandError.invalidCwd(cwd);
  const normal = posix.normalize(cwd).replace(/\/+$/, '') || '/';
  if (normal !== SESSION_ROOT && !normal.startsWith(`${SESSION_ROOT}/`)) throw CommandError.invalidCwd(cwd);
  return normal;
}

// What is recorded (and hashed for idempotency) as the run's `code`: the spec as JSON,
// with the variables in name order, so the same command is the same text.
export function canonicalCommand(spec: CommandSpec, background = false): string {
  return JSON.stringify({
    argv: spec.argv,
    cwd: spec.cwd,
    env: spec.env,
    ...(spec.stdin !== undefined ? { stdin: spec.stdin } : {}),
    ...(background ? { background: true } : {}),
  });
}

// How a process is shown in listings: the shell line it was given, else its argv.
export function commandLineOf(canonical: string): string {
  try {
    const { argv } = JSON.parse(canonical) as { argv: string[] };
    if (argv.length === 3 && argv[0] === '/bin/bash' && argv[1] === '-c') return argv[2]!;
    return argv.map((arg) => (/^[\w@%+=:,./-]+$/.test(arg) ? arg : `'${arg.replaceAll("'", `'\\''`)}'`)).join(' ');
  } catch {
    return '';
  }
}
