import { InvalidArgumentError, type Command } from 'commander';
import type { Drydock } from '@drydock/client';
import { adminClient, readLogin, tenantClient, type GlobalOptions, type SavedLogin } from './config.js';
import type { Io } from './io.js';

// What a command needs besides its arguments.
export class Context {
  // A command whose code failed sets 1 here after printing its output; errors are thrown.
  exitCode = 0;
  private login: SavedLogin | null | undefined;

  constructor(readonly io: Io) {}

  // The command's own options merged with the root's (--url, --api-key, --json), which
  // commander accepts before or after the subcommand.
  options<T extends object>(command: Command): T & GlobalOptions {
    return command.optsWithGlobals<T & GlobalOptions>();
  }

  // What `drydock login` saved (read once, when a command first needs it).
  savedLogin(): SavedLogin | null {
    if (this.login === undefined) this.login = readLogin(this.io.env);
    return this.login;
  }

  client(command: Command): Drydock {
    return tenantClient(this.options(command), this.io.env, this.savedLogin());
  }

  admin(command: Command): Drydock {
    return adminClient(this.options(command), this.io.env, this.savedLogin());
  }
}

// Argument parsers: a bad value is a commander usage error (exit 2) before anything runs.
export function positiveInt(name: string) {
  return (value: string): number => {
    const n = Number(value);
    if (!/^\d+$/.test(value) || !Number.isSafeInteger(n) || n <= 0) throw new InvalidArgumentError(`${name} must be a positive whole number.`);
    return n;
  };
}

// The platform's rule for thread ids (THREAD_ID_RULE in libs/core), checked here so that a
// typo is a usage error and not a round trip.
export const THREAD_ID = /^[A-Za-z0-9][A-Za-z0-9_.:-]{0,127}$/;

export function threadId(value: string): string {
  if (!THREAD_ID.test(value)) throw new InvalidArgumentError('a thread id is 1-128 letters, digits, _ . : - starting with a letter or digit.');
  return value;
}
