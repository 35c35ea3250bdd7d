import type { Command } from 'commander';
import type { Context } from '../context.js';
import { formatBytes, printJson, table } from '../output.js';

const seconds = (value: number) => value.toFixed(1);

export function registerUsage(program: Command, ctx: Context): void {
  program
    .command('usage')
    .description('operators: usage per tenant and day (executions, batch items, CPU and wall seconds, egress) and what each tenant stores')
    .option('--admin-key <key>', 'the operator key (default: DRYDOCK_ADMIN_KEY)')
    .option('--tenant <id>', "only this tenant's (ten_…)")
    .option('--from <time>', 'from this UTC day or time (ISO 8601: 2026-01-31 or 2026-01-31T12:00:00Z; default 30 days before --to)')
    .option('--to <time>', 'until this one, excluded (default now; at most 366 days after --from)')
    .addHelpText(
      'after',
      '\nPrints DAY TENANT EXEC EXEC-CPU-S EXEC-WALL-S ITEMS ITEMS-CPU-S ITEMS-WALL-S EGRESS-IN EGRESS-OUT, a line per tenant and day' +
        ' with any use, then TENANT FILES ARTIFACTS ARTIFACT-COUNT: what each stores now. With --json, {from, to, days, stored}.',
    )
    .action(async (_options: unknown, command: Command) => {
      const options = ctx.options<{ tenant?: string; from?: string; to?: string }>(command);
      const usage = await ctx.admin(command).admin.usage({ tenantId: options.tenant, from: options.from, to: options.to });
      if (options.json) return printJson(ctx.io.stdout, usage);
      const { stdout } = ctx.io;
      stdout.write(`usage from ${usage.from} to ${usage.to}\n`);
      if (usage.days.length > 0) {
        const rows = usage.days.map((d) => [
          d.day,
          d.tenantId,
          String(d.executions.count),
          seconds(d.executions.cpuSeconds),
          seconds(d.executions.wallSeconds),
          String(d.batchItems.count),
          seconds(d.batchItems.cpuSeconds),
          seconds(d.batchItems.wallSeconds),
          formatBytes(d.egress.bytesIn),
          formatBytes(d.egress.bytesOut),
        ]);
        stdout.write(table([['DAY', 'TENANT', 'EXEC', 'EXEC-CPU-S', 'EXEC-WALL-S', 'ITEMS', 'ITEMS-CPU-S', 'ITEMS-WALL-S', 'EGRESS-IN', 'EGRESS-OUT'], ...rows]));
      } else stdout.write('no executions or batch items in that range\n');
      if (usage.stored.length > 0) {
        const rows = usage.stored.map((s) => [s.tenantId, formatBytes(s.threadFileBytes), formatBytes(s.artifactBytes), String(s.artifactCount)]);
        stdout.write('\n' + table([['TENANT', 'FILES', 'ARTIFACTS', 'ARTIFACT-COUNT'], ...rows]));
      }
    });
}
