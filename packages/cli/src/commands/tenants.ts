import type { Command } from 'commander';
import type { Context } from '../context.js';
import { printJson, table } from '../output.js';

export function registerTenants(program: Command, ctx: Context): void {
  const tenants = program
    .command('tenants')
    .description('operators: manage tenants (uses DRYDOCK_ADMIN_KEY, not a tenant key)')
    .option('--admin-key <key>', 'the operator key (default: DRYDOCK_ADMIN_KEY)');

  tenants
    .command('create')
    .description('create a tenant and print its API key (shown once)')
    .argument('<name>', "the tenant's name")
    .action(async (name: string, _options: unknown, command: Command) => {
      const options = ctx.options(command);
      const tenant = await ctx.admin(command).tenants.create(name);
      if (options.json) return printJson(ctx.io.stdout, tenant);
      ctx.io.stdout.write(table([['id', tenant.id], ['name', tenant.name], ['api key', tenant.apiKey]]));
      ctx.io.stderr.write('The API key is shown once: store it now.\n');
    });
}
