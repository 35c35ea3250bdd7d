import type { Command } from 'commander';
import type { Context } from '../context.js';
import { printJson, table } from '../output.js';
import { logTime } from './network.js';

export function registerWorkers(program: Command, ctx: Context): void {
  const workers = program
    .command('workers')
    .description('operators: the live workers; drain one (uses DRYDOCK_ADMIN_KEY, not a tenant key)')
    .option('--admin-key <key>', 'the operator key (default: DRYDOCK_ADMIN_KEY)');

  workers
    .command('ls')
    .description('list the live workers: their state, sessions, warm pool and last heartbeat')
    .addHelpText('after', '\nPrints ID HOST STATE SESSIONS POOL DOCKER STARTED LAST-SEEN (POOL: ready/size); with --json, the workers.')
    .action(async (_options: unknown, command: Command) => {
      const list = await ctx.admin(command).admin.workers.list();
      if (ctx.options(command).json) return printJson(ctx.io.stdout, list);
      if (list.length === 0) return;
      const rows = list.map((w) => [
        w.id,
        w.hostname,
        w.state ?? 'active',
        `${w.sessions}/${w.capacity}`,
        w.pool ? `${w.pool.ready}/${w.pool.size}` : '-',
        w.dockerHealthy ? 'ok' : 'down',
        logTime(w.startedAt),
        logTime(w.lastSeenAt),
      ]);
      ctx.io.stdout.write(table([['ID', 'HOST', 'STATE', 'SESSIONS', 'POOL', 'DOCKER', 'STARTED', 'LAST-SEEN'], ...rows]));
    });

  workers
    .command('drain')
    .description('drain a worker: it takes no new sessions or batch items, lets running work finish, hands its sessions back')
    .argument('<id>', 'the worker id (drydock workers ls)')
    .addHelpText('after', '\nReturns once the drain is requested (the worker sees it with its next heartbeat); drydock workers ls shows draining, then drained.')
    .action(async (id: string, _options: unknown, command: Command) => {
      const worker = await ctx.admin(command).admin.workers.drain(id);
      if (ctx.options(command).json) return printJson(ctx.io.stdout, worker);
      ctx.io.stdout.write(`${worker.id}  drain requested  (${worker.sessions} sessions to hand back)\n`);
    });
}
