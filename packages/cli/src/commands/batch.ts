import type { Command } from 'commander';
import { finished, type Batch, type BatchRun } from '@drydock/client';
import { positiveInt, type Context } from '../context.js';
import { CliError, ExitCode } from '../exit-codes.js';
import { readItems } from '../jsonl.js';
import { formatDuration, printJson, writeChunk } from '../output.js';
import { ProgressReporter, type Progress } from '../progress-bar.js';
import { allowEntry, networkOf } from './network.js';

const COUNT_ORDER = ['ok', 'error', 'timeout', 'memory', 'killed', 'cancelled', 'running', 'queued'] as const;

export function progressOf(batch: Batch): Progress {
  const { counts } = batch;
  return { done: finished(counts), failed: counts.error + counts.timeout + counts.memory + counts.killed, cancelled: counts.cancelled, total: batch.total };
}

// "bat_…  completed  500/500 done  ok 498  error 2": the counts that are not zero.
export function statusLine(batch: Batch): string {
  const counts = COUNT_ORDER.filter((key) => batch.counts[key] > 0).map((key) => `${key} ${batch.counts[key]}`);
  return [batch.id, batch.status, `${finished(batch.counts)}/${batch.total} done`, ...counts].join('  ');
}

// A batch failed when any item did not end ok (cancelled ones included).
const failedBatch = (batch: Batch) => batch.counts.ok < batch.total;

export function registerBatch(program: Command, ctx: Context): void {
  const batch = program.command('batch').description('many independent runs, each in a clean sandbox');

  batch
    .command('submit')
    .description('submit items from a JSON Lines file ({"code": …, "files"?: …, "id"?: …} a line) and follow them')
    .argument('<items>', 'the .jsonl file, or - for stdin')
    .option('--concurrency <n>', 'items of this batch running at once', positiveInt('--concurrency'))
    .option('--timeout <ms>', "each item's time limit in milliseconds", positiveInt('--timeout'))
    .option('--idempotency-key <key>', 'submitting again with the same key returns the first batch')
    .option('--template <name>', 'a template ("name" or "name:version", see `drydock templates ls`) every item starts from')
    .option('--allow <host>', "a host every item's code may reach: pypi.org, *.example.com (repeatable; within the tenant's ceiling)", allowEntry)
    .option('--wait', 'wait until every item has ended, with a progress bar on stderr (default)')
    .option('--no-wait', 'return as soon as the batch is queued')
    .addHelpText('after', '\nExit code 1 when an item did not end ok (only with --wait).')
    .action(async (path: string, _options: unknown, command: Command) => {
      const options = ctx.options<{ concurrency?: number; timeout?: number; idempotencyKey?: string; template?: string; allow?: string[]; wait?: boolean }>(command);
      const client = ctx.client(command);
      const run = await client.batches.submit(readItems(path, ctx.io), {
        concurrency: options.concurrency,
        timeoutMs: options.timeout,
        idempotencyKey: options.idempotencyKey,
        ...(options.template ? { template: options.template } : {}),
        ...networkOf(options.allow),
      });
      if (options.wait === false) {
        if (options.json) printJson(ctx.io.stdout, run.info);
        else ctx.io.stdout.write(`${run.id}\n`);
        return;
      }
      // The id first, so that a script or a user who presses Ctrl-C still has it.
      if (!options.json) ctx.io.stdout.write(`${run.id}\n`);
      const started = Date.now();
      const final = await follow(run, ctx);
      if (options.json) printJson(ctx.io.stdout, final);
      else ctx.io.stderr.write(`${statusLine(final)}  in ${formatDuration((Date.now() - started) / 1000)}\n`);
      if (failedBatch(final)) ctx.exitCode = ExitCode.Failed;
    });

  batch
    .command('status')
    .description("a batch's state and counts")
    .argument('<id>', 'the batch id (bat_…)')
    .action(async (id: string, _options: unknown, command: Command) => {
      const options = ctx.options(command);
      const run = await ctx.client(command).batches.get(id);
      const info = run.info as Batch;
      if (options.json) printJson(ctx.io.stdout, info);
      else ctx.io.stdout.write(`${statusLine(info)}\n`);
    });

  batch
    .command('results')
    .description('every finished item as NDJSON on stdout, in index order')
    .argument('<id>', 'the batch id (bat_…)')
    .option('--wait', 'wait until every item has ended first (with a progress bar on stderr)')
    .action(async (id: string, _options: unknown, command: Command) => {
      const options = ctx.options<{ wait?: boolean }>(command);
      const run = await ctx.client(command).batches.get(id);
      if (options.wait) await follow(run, ctx);
      // NDJSON whatever --json says: it already is machine-readable.
      for await (const item of run.results()) await writeChunk(ctx.io.stdout, JSON.stringify(item) + '\n');
    });

  batch
    .command('cancel')
    .description('cancel the queued items; running ones finish unless --kill')
    .argument('<id>', 'the batch id (bat_…)')
    .option('--kill', 'also stop the items running now (they end killed)')
    .action(async (id: string, _options: unknown, command: Command) => {
      const options = ctx.options<{ kill?: boolean }>(command);
      const run = await ctx.client(command).batches.get(id);
      const info = await run.cancel({ kill: options.kill ?? false });
      if (options.json) printJson(ctx.io.stdout, info);
      else ctx.io.stdout.write(`${statusLine(info)}\n`);
    });
}

// Waits for the batch with progress on stderr. Ctrl-C stops waiting, not the batch.
async function follow(run: BatchRun, ctx: Context): Promise<Batch> {
  const { stderr } = ctx.io;
  const reporter = new ProgressReporter(stderr, { tty: Boolean(stderr.isTTY), columns: stderr.columns || 80 });
  const abort = new AbortController();
  const interrupt = () => abort.abort();
  process.once('SIGINT', interrupt);
  try {
    const final = await run.wait({ onProgress: (batch) => reporter.update(progressOf(batch)), signal: abort.signal });
    reporter.finish(progressOf(final));
    return final;
  } catch (error) {
    reporter.stop();
    if (!abort.signal.aborted) throw error;
    throw new CliError(ExitCode.Interrupted, 'INTERRUPTED', `Stopped waiting; batch ${run.id} keeps running (drydock batch status ${run.id}, drydock batch cancel ${run.id}).`);
  } finally {
    process.removeListener('SIGINT', interrupt);
  }
}
