import { isAbsolute, normalize } from 'node:path';
import { InvalidArgumentError, type Command } from 'commander';
import { isDrydockError, type TemplateBuild, type TemplateBuildError, type TemplateVersion } from '@drydock/client';
import { BuildProgress } from '../build-progress.js';
import type { Context } from '../context.js';
import { CliError, ExitCode, usageError } from '../exit-codes.js';
import type { Io } from '../io.js';
import { readLocal } from '../local-files.js';
import { formatBytes, printJson, table, writeChunk } from '../output.js';

// The platform's rule for template names (TEMPLATE_NAME in libs/templates), checked here
// so that a typo is a usage error and not a round trip.
export const TEMPLATE_NAME = /^[a-z0-9][a-z0-9._-]{0,62}$/;

function templateName(value: string): string {
  if (!TEMPLATE_NAME.test(value)) throw new InvalidArgumentError('a template name is 1-63 lowercase letters, digits, ".", "_" and "-", starting with a letter or digit.');
  return value;
}

// "name" or "name:version", as sessions take it (`--template` of run, exec and shell).
export function templateRef(value: string): string {
  const [name, version, ...rest] = value.split(':');
  if (rest.length > 0 || !TEMPLATE_NAME.test(name!) || (version !== undefined && !/^[1-9]\d{0,8}$/.test(version))) {
    throw new InvalidArgumentError('a template is NAME (its newest ready version) or NAME:VERSION, e.g. analytics or analytics:3.');
  }
  return value;
}

// --file PATH=LOCAL (LOCAL is COPY-able as PATH in the Dockerfile), or --file LOCAL for a
// relative path that is the same in both places. Repeatable.
function contextFile(value: string, previous: Record<string, string> = {}): Record<string, string> {
  const equals = value.indexOf('=');
  const [path, local] = equals >= 0 ? [value.slice(0, equals), value.slice(equals + 1)] : [value, value];
  const clean = normalize(path);
  if (!path || !local || isAbsolute(path) || clean === '..' || clean.startsWith('../')) {
    throw new InvalidArgumentError('--file takes PATH=LOCAL, PATH a relative path in the build context (e.g. --file requirements.txt=./deps/requirements.txt), or a relative LOCAL alone.');
  }
  return { ...previous, [path]: local };
}

// The build context's files are text (the API's `files`): a file that is not UTF-8 is
// refused here rather than sent mangled.
async function readContext(files: Record<string, string>, io: Io): Promise<Record<string, string>> {
  const decoder = new TextDecoder('utf-8', { fatal: true });
  const context: Record<string, string> = {};
  for (const [path, local] of Object.entries(files)) {
    try {
      context[path] = decoder.decode(await readLocal(local, io));
    } catch (error) {
      if (error instanceof CliError) throw error;
      throw usageError('LOCAL_FILE_NOT_TEXT', `${local} is not UTF-8 text: a template's build context takes text files only.`);
    }
  }
  return context;
}

// What a reference would give a session made now: the newest ready version for "name".
const matches = (ref: string, used: string | null) => used !== null && (ref.includes(':') ? used === ref : used.startsWith(`${ref}:`));

// A thread's live session is returned as it is: say so when it runs another template than
// the one asked for (--template applies to a session that is created).
export function warnIfOtherTemplate(io: Io, asked: string | undefined, session: { id: string; info: { template: string | null } }): void {
  if (asked === undefined || matches(asked, session.info.template)) return;
  io.stderr.write(`drydock: session ${session.id} was already live on ${session.info.template ?? 'the platform image'}; --template ${asked} applies to a new session (end this one first)\n`);
}

export function registerTemplates(program: Command, ctx: Context): void {
  const templates = program
    .command('templates')
    .description('sandbox images built from a Dockerfile that starts FROM drydock; sessions start from one with --template');

  templates
    .command('build')
    .description('build a template (a new version of it) and follow its build log')
    .argument('<name>', "the template's name (a new version when it exists)", templateName)
    .option('-f, --dockerfile <file>', 'the Dockerfile, starting FROM drydock, or - for stdin', 'Dockerfile')
    .option('--file <path=local>', 'a text file of the build context, COPY-able as PATH (repeatable)', contextFile)
    .option('--description <text>', "the template's description")
    .option('--no-wait', 'return as soon as the build is queued')
    .addHelpText(
      'after',
      '\nThe build log streams to stderr with the current step; on success stdout gets NAME:VERSION and the image digest.' +
        "\nCtrl-C stops waiting, not the build. Exit code 1 when the build failed (the failing step and its output on stderr).",
    )
    .action(async (name: string, _options: unknown, command: Command) => {
      const options = ctx.options<{ dockerfile: string; file?: Record<string, string>; description?: string; wait: boolean }>(command);
      // Configuration first: a missing key must not wait for stdin to be read.
      const client = ctx.client(command);
      const dockerfile = (await readLocal(options.dockerfile, ctx.io)).toString('utf8');
      const files = options.file ? await readContext(options.file, ctx.io) : undefined;
      const build = await client.templates.build({ name, dockerfile, files, description: options.description });
      if (!options.wait) {
        if (options.json) printJson(ctx.io.stdout, { name: build.name, version: build.version, status: 'building' });
        else ctx.io.stdout.write(`${build.ref}\n`);
        return;
      }
      const outcome = await follow(build, ctx, !options.json);
      if ('failed' in outcome) {
        if (options.json) printJson(ctx.io.stdout, { name: build.name, ...(await client.templates.get(name)).versions.find((v) => v.version === build.version) });
        else ctx.io.stderr.write(`drydock: ${build.ref} failed: ${outcome.failed.buildError}\n`);
        ctx.exitCode = ExitCode.Failed;
        return;
      }
      if (options.json) printJson(ctx.io.stdout, { name: build.name, ...outcome.ready });
      else ctx.io.stdout.write(`${build.ref}  ${outcome.ready.imageDigest}\n`);
    });

  templates
    .command('logs')
    .description("a version's build log, followed until the build ends")
    .argument('<name[:version]>', 'the template, and the version (default: its newest)', templateRef)
    .addHelpText('after', '\nExit code 1 when that build failed.')
    .action(async (ref: string, _options: unknown, command: Command) => {
      const client = ctx.client(command);
      const [name, pinned] = ref.split(':') as [string, string | undefined];
      const version = pinned ? Number(pinned) : (await client.templates.get(name)).versions.at(-1)?.version;
      if (version === undefined) throw new CliError(ExitCode.Platform, 'TEMPLATE_NOT_FOUND', `Template "${name}" has no version.`);
      const build = client.templates.buildOf(name, version);
      // The log is the output here: on stdout, nothing else mixed in.
      for await (const line of build.logs()) await writeChunk(ctx.io.stdout, `${line}\n`);
      const failed = await build.wait().then(
        () => false,
        (error: unknown) => (isDrydockError(error, 'TEMPLATE_BUILD_FAILED') ? true : Promise.reject(error)),
      );
      if (failed) ctx.exitCode = ExitCode.Failed;
    });

  templates
    .command('ls')
    .description('your templates, then the shared ones, each with its newest version')
    .action(async (_options: unknown, command: Command) => {
      const options = ctx.options(command);
      const list = await ctx.client(command).templates.list();
      if (options.json) return printJson(ctx.io.stdout, list);
      if (list.length === 0) return;
      const rows = list.map((t) => [t.name, t.latest ? String(t.latest.version) : '-', t.latest?.status ?? '-', t.shared ? 'shared' : 'own', t.description ?? '']);
      ctx.io.stdout.write(table([['NAME', 'VERSION', 'STATUS', 'OWNER', 'DESCRIPTION'], ...rows]));
    });

  templates
    .command('get')
    .description('a template and its versions')
    .argument('<name>', 'the template', templateName)
    .action(async (name: string, _options: unknown, command: Command) => {
      const options = ctx.options(command);
      const template = await ctx.client(command).templates.get(name);
      if (options.json) return printJson(ctx.io.stdout, template);
      const rows = template.versions.map((v) => [String(v.version), v.status, v.sizeBytes === null ? '-' : formatBytes(v.sizeBytes), v.createdAt, v.imageDigest ?? (v.error ? firstLine(v.error) : '-')]);
      ctx.io.stdout.write(table([['VERSION', 'STATUS', 'SIZE', 'CREATED', 'DIGEST / ERROR'], ...rows]));
    });

  templates
    .command('rm')
    .description('delete a template: no new session starts from it; sessions using it go on')
    .argument('<name>', 'the template', templateName)
    .action(async (name: string, _options: unknown, command: Command) => {
      const options = ctx.options(command);
      await ctx.client(command).templates.delete(name);
      if (options.json) printJson(ctx.io.stdout, { name, deleted: true });
      else ctx.io.stdout.write(`${name} deleted\n`);
    });
}

const firstLine = (text: string) => text.split('\n', 1)[0]!;

// Follows the build, its log and progress on stderr (unless `show` is false). Ctrl-C
// stops waiting, not the build.
async function follow(build: TemplateBuild, ctx: Context, show: boolean): Promise<{ ready: TemplateVersion } | { failed: TemplateBuildError }> {
  const { stderr } = ctx.io;
  const progress = show ? new BuildProgress(stderr, { tty: Boolean(stderr.isTTY), columns: stderr.columns || 80 }) : null;
  const abort = new AbortController();
  const interrupt = () => abort.abort();
  process.once('SIGINT', interrupt);
  try {
    if (progress) for await (const line of build.logs({ signal: abort.signal })) progress.line(line);
    const ready = await build.wait({ signal: abort.signal });
    return { ready };
  } catch (error) {
    if (isDrydockError(error, 'TEMPLATE_BUILD_FAILED')) return { failed: error as TemplateBuildError };
    if (!abort.signal.aborted) throw error;
    throw new CliError(ExitCode.Interrupted, 'INTERRUPTED', `Stopped waiting; ${build.ref} keeps building (drydock templates logs ${build.ref}).`);
  } finally {
    progress?.finish();
    process.removeListener('SIGINT', interrupt);
  }
}
