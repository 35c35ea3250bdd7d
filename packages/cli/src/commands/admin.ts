import { Option, type Command } from 'commander';
import type { AdminConnection } from '@drydock/client';
import { positiveInt, type Context } from '../context.js';
import { printJson } from '../output.js';
import { connectionTable, takeConnections } from './network.js';

// What made a connection: its session, or its batch's item.
const origin = (c: AdminConnection) => c.sessionId ?? (c.batchId ? `${c.batchId}#${c.batchItem}` : '-');

export function registerAdmin(program: Command, ctx: Context): void {
  const admin = program
    .command('admin')
    .description('operators: read across tenants (uses DRYDOCK_ADMIN_KEY, not a tenant key)')
    .option('--admin-key <key>', 'the operator key (default: DRYDOCK_ADMIN_KEY)');

  admin
    .command('egress')
    .description("every tenant's connection attempts through the egress proxy, newest first")
    .option('--tenant <id>', "only this tenant's (ten_…)")
    .option('--session <id>', "only this session's (ses_…)")
    .option('--batch <id>', "only this batch's items' (bat_…)")
    .addOption(new Option('--verdict <verdict>', 'only the allowed or the denied ones').choices(['allowed', 'denied']))
    .option('--from <time>', 'started at or after (ISO 8601: 2026-01-31 or 2026-01-31T12:00:00Z)')
    .option('--to <time>', 'started before (ISO 8601)')
    .option('--limit <n>', 'at most this many, newest first (default 100)', positiveInt('--limit'))
    .addHelpText('after', "\nPrints TIME TENANT SESSION VERDICT HOST:PORT IN OUT REASON; with --json, {connections, next}.")
    .action(async (_options: unknown, command: Command) => {
      const options = ctx.options<{ tenant?: string; session?: string; batch?: string; verdict?: 'allowed' | 'denied'; from?: string; to?: string; limit?: number }>(command);
      const client = ctx.admin(command);
      const query = { tenantId: options.tenant, sessionId: options.session, batchId: options.batch, verdict: options.verdict, from: options.from, to: options.to };
      const log = await takeConnections(options.limit ?? 100, (limit, before) => client.admin.egress.list({ ...query, limit, before }));
      if (options.json) return printJson(ctx.io.stdout, log);
      if (log.connections.length === 0) return;
      ctx.io.stdout.write(
        connectionTable(log.connections, [
          { title: 'TENANT', cell: (c) => c.tenantId },
          { title: 'SESSION', cell: origin },
        ]),
      );
      if (log.next !== null) ctx.io.stderr.write(`drydock: older connections not shown (--limit ${options.limit ?? 100})\n`);
    });
}
