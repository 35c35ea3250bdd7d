import { Command, CommanderError } from 'commander';
import { isDrydockError } from '@drydock/client';
import { registerAdmin } from './commands/admin.js';
import { registerArtifacts } from './commands/artifacts.js';
import { registerBatch } from './commands/batch.js';
import { registerExec } from './commands/exec.js';
import { registerFiles } from './commands/files.js';
import { registerLogin } from './commands/login.js';
import { registerNetwork } from './commands/network.js';
import { registerRun } from './commands/run.js';
import { registerSessions } from './commands/sessions.js';
import { registerSnapshots } from './commands/snapshots.js';
import { registerShell } from './commands/shell.js';
import { registerTemplates } from './commands/templates.js';
import { registerTenants } from './commands/tenants.js';
import { registerUsage } from './commands/usage.js';
import { registerWorkers } from './commands/workers.js';
import { DEFAULT_URL } from './config.js';
import { Context } from './context.js';
import { CliError, ExitCode } from './exit-codes.js';
import { processIo, type Io } from './io.js';

export const VERSION = '0.1.0';

const EXIT_CODES_HELP = `
Environment: DRYDOCK_URL (default ${DEFAULT_URL}), DRYDOCK_API_KEY, DRYDOCK_ADMIN_KEY (tenants, admin, usage, workers).
Flags win over the environment, which wins over what drydock login saved ($XDG_CONFIG_HOME/drydock/config.json).

Exit codes: 0 ok, 1 the code, batch or template build failed, 2 bad arguments, 3 platform or API error,
4 missing configuration (no API key), 130 interrupted; exec and shell exit with the command's (the shell's) own code.`;

export function buildProgram(ctx: Context): Command {
  const program = new Command('drydock')
    .description('Run Python and shell commands in Drydock sandboxes, move thread files and artifacts, submit batches, build templates, read network logs; for operators, manage tenants and workers and read usage.')
    .version(VERSION)
    .option('--url <url>', `the gateway (default: DRYDOCK_URL or ${DEFAULT_URL})`)
    .option('--api-key <key>', 'the tenant API key (default: DRYDOCK_API_KEY)')
    .option('--json', 'machine-readable JSON on stdout (errors as {"error": …} on stderr)')
    .addHelpText('after', EXIT_CODES_HELP)
    // Set before the subcommands are added: they inherit all three. exitOverride makes
    // commander throw instead of exiting, so usage errors get our exit code 2.
    .exitOverride()
    .configureOutput({ writeOut: (s) => ctx.io.stdout.write(s), writeErr: (s) => ctx.io.stderr.write(s) })
    .showHelpAfterError();
  registerRun(program, ctx);
  registerExec(program, ctx);
  registerShell(program, ctx);
  registerSessions(program, ctx);
  registerSnapshots(program, ctx);
  registerNetwork(program, ctx);
  registerFiles(program, ctx);
  registerArtifacts(program, ctx);
  registerBatch(program, ctx);
  registerTemplates(program, ctx);
  registerLogin(program, ctx);
  registerTenants(program, ctx);
  registerUsage(program, ctx);
  registerWorkers(program, ctx);
  registerAdmin(program, ctx);
  return program;
}

// Runs one command line (without the node and script arguments) and resolves to the
// process's exit code; never throws, never exits, so tests can drive it in-process.
export async function runCli(argv: string[], io: Io = processIo()): Promise<number> {
  const ctx = new Context(io);
  const program = buildProgram(ctx);
  try {
    await program.parseAsync(argv, { from: 'user' });
    return ctx.exitCode;
  } catch (error) {
    // Commander has printed the message and the usage already; --help and --version
    // come through here too, with exit code 0.
    if (error instanceof CommanderError) return error.exitCode === 0 ? ExitCode.Ok : ExitCode.Usage;
    return reportError(error, io, Boolean(program.opts().json));
  }
}

function reportError(error: unknown, io: Io, json: boolean): number {
  const { exitCode, body } = describeError(error);
  if (json) io.stderr.write(JSON.stringify({ error: body }) + '\n');
  else {
    const details = body.details ? ` ${JSON.stringify(body.details)}` : '';
    const request = body.requestId ? ` (request ${body.requestId})` : '';
    io.stderr.write(`error ${body.code}: ${body.message}${details}${request}\n`);
  }
  return exitCode;
}

interface ErrorBody {
  code: string;
  message: string;
  status?: number;
  details?: Record<string, unknown>;
  requestId?: string;
}

function describeError(error: unknown): { exitCode: number; body: ErrorBody } {
  if (error instanceof CliError) return { exitCode: error.exitCode, body: { code: error.code, message: error.message } };
  if (isDrydockError(error)) {
    const { code, message, status, details, requestId } = error;
    return { exitCode: ExitCode.Platform, body: { code, message, ...(status ? { status } : {}), ...(details ? { details } : {}), ...(requestId ? { requestId } : {}) } };
  }
  // Anything else is a bug or an environment failure: still exit 3 so scripts treat it
  // as "not the code's fault", and keep the stack for the report.
  const message = error instanceof Error ? (error.stack ?? error.message) : String(error);
  return { exitCode: ExitCode.Platform, body: { code: 'UNEXPECTED', message } };
}
