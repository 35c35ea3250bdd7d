import { Option, type Command } from 'commander';
import type { Connection, Drydock, NetworkPolicy, Session, SessionInfo } from '@drydock/client';
import { positiveInt, threadId, type Context } from '../context.js';
import { CliError, ExitCode } from '../exit-codes.js';
import type { Io } from '../io.js';
import { formatBytes, printJson, table } from '../output.js';

// A session id, as the platform makes them (`ses_…`).
export const SESSION_ID = /^ses_/;

// The most a page of the connection log holds (the API's `limit`).
const MAX_PAGE = 1000;

// --allow HOST, repeatable; one value may also list several, comma-separated (no entry
// has a comma in it). The platform checks the entries (400 INVALID_NETWORK_POLICY, 422
// NETWORK_NOT_ALLOWED outside the tenant's ceiling).
export function allowEntry(value: string, previous: string[] = []): string[] {
  return [...previous, ...value.split(',').map((e) => e.trim()).filter((e) => e !== '')];
}

export const ALLOW_HELP = 'a host its code may reach: pypi.org, *.example.com, api.example.com:8443 (repeatable; within the tenant\'s ceiling)';

// What sessions.create takes for --allow: nothing without it (no network).
export const networkOf = (allow: string[] | undefined) => (allow ? { network: { allow } } : {});

// Entries as the platform stores them (lower case, no trailing dot), to compare lists.
const normalized = (allow: readonly string[]) => [...new Set(allow.map((e) => e.trim().toLowerCase().replace(/\.(?=:\d+$|$)/, '')))].sort();

export const describePolicy = (policy: NetworkPolicy | null): string =>
  policy === null ? 'none (no network)' : policy.allow.length === 0 ? 'nothing allowed (narrowed to an empty list)' : policy.allow.join(', ');

// A thread's live session is returned as it is: say so when its network is not the one
// --allow asked for (--allow applies to a session that is created).
export function warnIfOtherNetwork(io: Io, asked: string[] | undefined, session: { id: string; info: { network: NetworkPolicy | null } }): void {
  if (asked === undefined) return;
  const live = session.info.network;
  if (live && normalized(live.allow).join('\n') === normalized(asked).join('\n')) return;
  const now = live ? `with network ${describePolicy(live)}` : 'without network';
  io.stderr.write(`drydock: session ${session.id} was already live ${now}; --allow applies to a new session (end this one first, or narrow it: drydock network narrow)\n`);
}

// A command names a session by its id or by --thread: checked before anything is sent
// (a usage error, exit 2).
export function checkTarget(command: Command, target: string | undefined, thread: string | undefined): void {
  if (thread && target !== undefined) command.error('error: give a session id or --thread, not both.');
  if (!thread && (target === undefined || !SESSION_ID.test(target))) {
    command.error(`error: ${target === undefined ? 'no session' : `"${target}" is not a session id (ses_…)`}: give one, or --thread T.`);
  }
}

// The session a command names: its id, or --thread's live one (never created here).
export async function namedSession(client: Drydock, target: string | undefined, thread: string | undefined): Promise<Session> {
  if (!thread) return client.sessions.get(target!);
  const live = (await client.sessions.list()).find((s) => s.threadId === thread);
  if (!live) throw new CliError(ExitCode.Platform, 'SESSION_NOT_FOUND', `Thread "${thread}" has no live session.`);
  return live;
}

// Up to `limit` items of a log paged by `next`, newest first: each request asks for what
// is still wanted (so the last page's `next` is where a further listing would go on).
export async function takeConnections<T>(limit: number, page: (limit: number, before?: string) => Promise<{ connections: T[]; next: string | null }>) {
  const connections: T[] = [];
  let next: string | null = null;
  do {
    const answer = await page(Math.min(MAX_PAGE, limit - connections.length), next ?? undefined);
    connections.push(...answer.connections);
    next = answer.connections.length === 0 ? null : answer.next;
  } while (next !== null && connections.length < limit);
  return { connections, next };
}

// 2026-01-31T12:00:00Z: to the second, as a log shows it.
export const logTime = (iso: string) => iso.replace(/\.\d+Z$/, 'Z');

const target = (c: Connection) => (c.host.includes(':') ? `[${c.host}]:${c.port}` : `${c.host}:${c.port}`);

// TIME, VERDICT, HOST:PORT, IN, OUT, REASON, with `extra` columns after the time.
export function connectionTable<T extends Connection>(rows: readonly T[], extra: { title: string; cell: (c: T) => string }[] = []): string {
  return table([
    ['TIME', ...extra.map((e) => e.title), 'VERDICT', 'HOST:PORT', 'IN', 'OUT', 'REASON'],
    ...rows.map((c) => [logTime(c.startedAt), ...extra.map((e) => e.cell(c)), c.verdict, target(c), formatBytes(c.bytesIn), formatBytes(c.bytesOut), c.reason]),
  ]);
}

function printSession(ctx: Context, info: SessionInfo, policy: NetworkPolicy | null): void {
  ctx.io.stdout.write(table([['session', info.id], ['thread', info.threadId], ['status', info.status], ['policy', describePolicy(policy)]]));
}

const verdictOption = () => new Option('--verdict <verdict>', 'only the allowed or the denied ones').choices(['allowed', 'denied']);

export function registerNetwork(program: Command, ctx: Context): void {
  const network = program
    .command('network')
    .description("a session's network policy and its connection log (newest first); narrow it")
    .argument('[session-id]', 'the session (or --thread)')
    .option('-t, --thread <id>', "the thread's live session", threadId)
    .addOption(verdictOption())
    .option('--limit <n>', 'at most this many connections, newest first (default 100)', positiveInt('--limit'))
    .addHelpText(
      'after',
      '\nPrints the session, its policy (the hosts its code may reach), then TIME VERDICT HOST:PORT IN OUT REASON for each' +
        ' connection attempt through the egress proxy. A session started without --allow has no network.' +
        '\nWith --json: {policy, connections, next} (next: pass the API\'s `before` for older ones).',
    )
    .action(async (id: string | undefined, _options: unknown, command: Command) => {
      const options = ctx.options<{ thread?: string; verdict?: 'allowed' | 'denied'; limit?: number }>(command);
      checkTarget(command, id, options.thread);
      const session = await namedSession(ctx.client(command), id, options.thread);
      // Every page answers the policy too: the newest one's is kept.
      const seen: { policy: NetworkPolicy | null } = { policy: null };
      const log = await takeConnections(options.limit ?? 100, async (limit, before) => {
        const page = await session.network({ verdict: options.verdict, limit, before });
        seen.policy = page.policy;
        return page;
      });
      const { policy } = seen;
      if (options.json) return printJson(ctx.io.stdout, { policy, ...log });
      printSession(ctx, session.info, policy);
      if (policy === null) {
        ctx.io.stdout.write(`\n${session.id} has no network: it was started without --allow (a policy cannot be added to a live session).\n`);
        return;
      }
      if (log.connections.length === 0) {
        ctx.io.stdout.write(`\nno connections${options.verdict ? ` ${options.verdict}` : ''} yet\n`);
        return;
      }
      ctx.io.stdout.write('\n' + connectionTable(log.connections));
      if (log.next !== null) ctx.io.stderr.write(`drydock: older connections not shown (--limit ${options.limit ?? 100})\n`);
    });

  network
    .command('narrow')
    .description("narrow a live session's policy: its next connections follow it at once (it can never be widened)")
    .argument('[session-id]', 'the session (or --thread)')
    .option('--allow <host>', 'a host it may still reach: each must already be allowed (repeatable)', allowEntry)
    .option('--none', 'allow nothing more (the policy becomes empty; open tunnels are not cut)')
    .addHelpText('after', '\nAn entry its current policy does not allow is refused (NETWORK_NOT_ALLOWED, exit 3), as for a session without network.')
    .action(async (id: string | undefined, _options: unknown, command: Command) => {
      const options = ctx.options<{ thread?: string; allow?: string[]; none?: boolean }>(command);
      if (!options.allow && !options.none) command.error('error: give the new allow list (--allow HOST, repeatable), or --none.');
      if (options.allow && options.none) command.error('error: give --allow or --none, not both.');
      checkTarget(command, id, options.thread);
      const session = await namedSession(ctx.client(command), id, options.thread);
      const info = await session.narrowNetwork(options.allow ?? []);
      if (options.json) return printJson(ctx.io.stdout, info);
      printSession(ctx, info, info.network);
    });
}
