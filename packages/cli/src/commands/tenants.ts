import { InvalidArgumentError, type Command } from 'commander';
import type { Tenant, TenantLimits } from '@drydock/client';
import type { Context } from '../context.js';
import { usageError } from '../exit-codes.js';
import { printJson, table } from '../output.js';
import { logTime } from './network.js';

// Every tenant limit the API takes (docs/api.md, "Tenant limits") and how its value is
// written on the command line; `satisfies` breaks the build when the API gains one.
const LIMITS = {
  memoryMb: 'int',
  cpus: 'number',
  timeoutMs: 'int',
  pids: 'int',
  sessionDiskMb: 'int',
  maxSessions: 'int',
  vfsBytes: 'int',
  maxFilesPerThread: 'int',
  artifactCount: 'int',
  artifactBytes: 'int',
  artifactRetentionSeconds: 'int',
  batchConcurrency: 'int',
  requestsPerMinute: 'int',
  concurrentExecutions: 'int',
  snapshotCount: 'int',
  snapshotBytes: 'int',
  network: 'hosts',
  tiers: 'tiers',
} as const satisfies Record<keyof TenantLimits, 'int' | 'number' | 'hosts' | 'tiers'>;

const TIERS = ['runc', 'gvisor'];

type LimitName = keyof typeof LIMITS;
type LimitChange = { name: LimitName; value: number | string[] | null };

// NAME=VALUE: a whole number (cpus: any number); network=HOST,HOST… sets the network
// ceiling's hosts, network=none removes it; tiers=gvisor (or runc,gvisor: the first is
// the default) sets the tiers its sessions may run on, tiers=none removes the list. Checked before anything is sent (exit 2); the
// platform checks the ranges.
function limitChange(value: string, previous: LimitChange[] = []): LimitChange[] {
  const equals = value.indexOf('=');
  const name = value.slice(0, equals) as LimitName;
  const raw = value.slice(equals + 1).trim();
  if (equals <= 0 || !(name in LIMITS)) {
    throw new InvalidArgumentError(`"${value}" is not NAME=VALUE with one of ${Object.keys(LIMITS).join(', ')}.`);
  }
  const kind = LIMITS[name];
  if (kind === 'tiers') {
    const tiers = raw.split(',').map((t) => t.trim()).filter(Boolean);
    if (raw !== 'none' && (tiers.length === 0 || tiers.some((t) => !TIERS.includes(t)))) {
      throw new InvalidArgumentError(`tiers takes ${TIERS.join(', ')} (comma-separated, the default first) or none, not "${raw}".`);
    }
    return [...previous, { name, value: raw === 'none' ? null : tiers }];
  }
  if (kind === 'hosts') {
    const hosts = raw.split(',').map((h) => h.trim()).filter(Boolean);
    if (raw !== 'none' && hosts.length === 0) throw new InvalidArgumentError('network takes HOST,HOST… or none.');
    return [...previous, { name, value: raw === 'none' ? null : hosts }];
  }
  const number = Number(raw);
  if (raw === '' || !Number.isFinite(number) || (kind === 'int' && !Number.isSafeInteger(number))) {
    throw new InvalidArgumentError(`${name} takes ${kind === 'int' ? 'a whole number' : 'a number'}, not "${raw}".`);
  }
  return [...previous, { name, value: number }];
}

function describeLimits(limits: TenantLimits): string {
  const rows = Object.entries(limits)
    .filter(([, value]) => value !== undefined && value !== null)
    .map(([name, value]) => {
      if (name === 'tiers') return [name, (value as string[]).join(', ')];
      if (name !== 'network') return [name, String(value)];
      const ceiling = value as NonNullable<TenantLimits['network']>;
      return [name, ceiling.allow.join(', ') + (ceiling.ranges?.length ? `  (ranges ${ceiling.ranges.join(', ')})` : '')];
    });
  return rows.length === 0 ? 'no limits set: every one is the platform default\n' : table(rows);
}

function describeTenant(tenant: Tenant): string {
  return (
    table([
      ['id', tenant.id],
      ['name', tenant.name],
      ['status', tenant.suspendedAt ? `suspended since ${logTime(tenant.suspendedAt)}` : 'active'],
      ['created', logTime(tenant.createdAt)],
    ]) +
    '\nlimits (the ones set; the rest are the platform defaults)\n' +
    describeLimits(tenant.limits)
  );
}

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

  tenants
    .command('ls')
    .description('list the tenants')
    .addHelpText('after', '\nPrints ID NAME STATUS CREATED; with --json, the tenants with their limits.')
    .action(async (_options: unknown, command: Command) => {
      const list = await ctx.admin(command).tenants.list();
      if (ctx.options(command).json) return printJson(ctx.io.stdout, list);
      if (list.length === 0) return;
      const rows = list.map((t) => [t.id, t.name, t.suspendedAt ? 'suspended' : 'active', logTime(t.createdAt)]);
      ctx.io.stdout.write(table([['ID', 'NAME', 'STATUS', 'CREATED'], ...rows]));
    });

  tenants
    .command('get')
    .description('show a tenant: its status and the limits set for it')
    .argument('<id>', 'the tenant (ten_…)')
    .action(async (id: string, _options: unknown, command: Command) => {
      const tenant = await ctx.admin(command).tenants.get(id);
      if (ctx.options(command).json) return printJson(ctx.io.stdout, tenant);
      ctx.io.stdout.write(describeTenant(tenant));
    });

  tenants
    .command('suspend')
    .description("suspend a tenant: its keys answer 403 TENANT_SUSPENDED, its live sessions end, its queued batch items wait")
    .argument('<id>', 'the tenant (ten_…)')
    .action(async (id: string, _options: unknown, command: Command) => {
      const tenant = await ctx.admin(command).tenants.suspend(id);
      if (ctx.options(command).json) return printJson(ctx.io.stdout, tenant);
      ctx.io.stdout.write(`${tenant.id}  suspended\n`);
    });

  tenants
    .command('resume')
    .description('resume a suspended tenant: its keys work and its queued batch items start again')
    .argument('<id>', 'the tenant (ten_…)')
    .action(async (id: string, _options: unknown, command: Command) => {
      const tenant = await ctx.admin(command).tenants.resume(id);
      if (ctx.options(command).json) return printJson(ctx.io.stdout, tenant);
      ctx.io.stdout.write(`${tenant.id}  active\n`);
    });

  tenants
    .command('rm')
    .description('delete a tenant and everything it owns (not undoable)')
    .argument('<id>', 'the tenant (ten_…)')
    .option('--yes', 'yes, delete it: its sessions, files, artifacts, batches, agents and usage')
    .action(async (id: string, _options: unknown, command: Command) => {
      const options = ctx.options<{ yes?: boolean }>(command);
      if (!options.yes) {
        throw usageError('CONFIRMATION_REQUIRED', `Deleting ${id} removes its sessions, files, artifacts, batches, agents and usage, and cannot be undone: pass --yes.`);
      }
      const deleted = await ctx.admin(command).tenants.delete(id);
      if (options.json) return printJson(ctx.io.stdout, deleted);
      ctx.io.stdout.write(
        `${deleted.id}  deleted  (${deleted.sessionsEnded} sessions ended, ${deleted.batchesCancelled} batches cancelled, ${deleted.blobsRemoved} artifact blobs removed)\n`,
      );
    });

  tenants
    .command('limits')
    .description("show a tenant's limits, or change some: NAME=VALUE … (the others keep theirs)")
    .argument('<id>', 'the tenant (ten_…)')
    .argument('[changes...]', `NAME=VALUE: ${Object.keys(LIMITS).join(', ')}; network=HOST,HOST… or network=none`)
    .addHelpText(
      'after',
      '\nExamples: drydock tenants limits ten_… memoryMb=2048 maxSessions=20' +
        '\n          drydock tenants limits ten_… network=pypi.org,files.pythonhosted.org   (network=none: no network)' +
        '\nPrints the limits set (after the change); a limit not set is the platform default. With --json, the tenant.',
    )
    .action(async (id: string, changes: string[], _options: unknown, command: Command) => {
      const parsed = changes.reduce<LimitChange[]>((all, change) => {
        try {
          return limitChange(change, all);
        } catch (error) {
          return command.error(`error: ${(error as Error).message}`);
        }
      }, []);
      const admin = ctx.admin(command).tenants;
      let tenant = await admin.get(id);
      if (parsed.length > 0) {
        const update: Record<string, unknown> = {};
        for (const { name, value } of parsed) {
          // A new host list keeps the ceiling's private ranges.
          update[name] = name === 'network' && Array.isArray(value) ? { ...tenant.limits.network, allow: value } : value;
        }
        tenant = await admin.update(id, update as TenantLimits);
      }
      if (ctx.options(command).json) return printJson(ctx.io.stdout, tenant);
      ctx.io.stdout.write(describeLimits(tenant.limits));
    });
}
