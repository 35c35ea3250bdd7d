import { TemplatesService } from '@drydock/templates';
import { Injectable } from '@nestjs/common';
import { McpServer, ResourceTemplate } from '@modelcontextprotocol/sdk/server/mcp.js';
import type { CallToolResult } from '@modelcontextprotocol/sdk/types.js';
import { z } from 'zod';
import { DrydockError, THREAD_ID_PATTERN, type TenantPrincipal } from '@drydock/core';
import { renderCommand, renderExecution, toCommandResult, toExecuteResult } from '@drydock/agents';
import { ArtifactsService } from '@drydock/artifacts';
import { SessionCommandsService, SessionExecutionsService, SessionsService, SnapshotsService } from '@drydock/sessions';
import { VfsService, type ThreadScope } from '@drydock/vfs';

// Artifacts served as MCP resources up to this size; larger ones name their REST route.
const MAX_RESOURCE_BYTES = 10 * 1024 * 1024;
const LISTED_ARTIFACTS = 50;

const threadId = z
  .string()
  .regex(THREAD_ID_PATTERN, 'a thread id: letters, digits, "_", ".", ":" or "-", up to 128')
  .describe('The conversation thread: its sandbox session and its files. Pick one per conversation and keep it.');

const template = z
  .string()
  .max(80)
  .optional()
  .describe('A template ("name" or "name:version", see list_templates) the thread\'s session starts from when it has none running; default: the platform image.');

const allow = z
  .array(z.string().min(1).max(260))
  .max(100)
  .optional()
  .describe(
    'Hosts the code may reach through the platform\'s egress proxy when the thread\'s session starts ("pypi.org", "*.example.com", "api.example.com:8443"), ' +
      'within the tenant\'s ceiling; default: no network. Any other host answers HTTP 403 "Forbidden by Drydock egress policy".',
  );

const tier = z
  .enum(['runc', 'gvisor'])
  .optional()
  .describe("The isolation tier of the thread's session when it starts: gvisor sessions keep their memory when idle and can be snapshotted (see snapshot, fork); default: the tenant's.");

// The session options a tool's arguments ask for (used when the thread has none running).
const sessionOptions = (thread: string, template: string | undefined, hosts: string[] | undefined, asked?: 'runc' | 'gvisor') => ({
  threadId: thread,
  ...(template ? { template } : {}),
  ...(hosts ? { network: { allow: hosts } } : {}),
  ...(asked ? { tier: asked } : {}),
});

const text = (value: string, isError = false): CallToolResult => ({ content: [{ type: 'text', text: value }], ...(isError ? { isError } : {}) });

// What a failure reads like to the model: the stable code and the sentence.
async function attempt(work: () => Promise<CallToolResult>): Promise<CallToolResult> {
  try {
    return await work();
  } catch (error) {
    if (error instanceof DrydockError) return text(`${error.code}: ${error.message}`, true);
    throw error;
  }
}

// The sandbox as MCP tools and resources, for one tenant (the API key's): Python in a
// thread's session (variables persist between calls), shell commands beside it, the
// thread's files, and the tenant's artifacts. A thread is the client's choice, within its tenant only.
@Injectable()
export class DrydockMcpServer {
  constructor(
    private readonly sessions: SessionsService,
    private readonly executions: SessionExecutionsService,
    private readonly commands: SessionCommandsService,
    private readonly vfs: VfsService,
    private readonly artifacts: ArtifactsService,
    private readonly templates: TemplatesService,
    private readonly snapshots: SnapshotsService,
  ) {}

  // A server for one request (stateless Streamable HTTP): it knows only this tenant.
  create(principal: TenantPrincipal): McpServer {
    const server = new McpServer({ name: 'drydock', version: '1.0.0' });
    const scope = (thread: string): ThreadScope => ({ tenantId: principal.tenantId, threadId: thread });

    server.registerTool(
      'run_python',
      {
        title: 'Run Python',
        description:
          "Runs Python in the thread's sandbox. Variables, imports and functions persist between calls on the same thread; " +
          'files are under /session (the thread\'s files); what the code writes to /session/artifacts/ becomes a downloadable artifact.',
        inputSchema: {
          thread_id: threadId,
          code: z.string().min(1).max(1_048_576).describe('Python source; the value of a trailing expression is returned.'),
          timeout_ms: z.number().int().min(100).max(86_400_000).optional().describe('Time limit of this run (clamped to the tenant\'s).'),
          template,
          allow,
          tier,
        },
      },
      // extra.signal aborts when the client goes away mid-call (the transport closes with
      // its request): the code is then interrupted, not left to its time limit.
      ({ thread_id, code, timeout_ms, template, allow, tier }, extra) =>
        attempt(async () => {
          const { session } = await this.sessions.create(principal.tenantId, sessionOptions(thread_id, template, allow, tier));
          const run = await this.executions.execute(principal, session.id, { code, timeoutMs: timeout_ms }, undefined, { signal: extra.signal });
          const [rendered, artifact] = renderExecution(toExecuteResult(run));
          return text(rendered, artifact.isError === true);
        }),
    );

    server.registerTool(
      'run_command',
      {
        title: 'Run a shell command',
        description:
          "Runs a shell command (/bin/bash -c) in the thread's sandbox, in /session (the thread's files) or cwd, beside the Python session, " +
          'whose variables it never touches. Answers what it wrote (stdout, then stderr) and "Exit code: N"; a non-zero exit, a timeout ' +
          'or an out-of-memory kill is a tool error. Each call is a new shell; processes it leaves running are stopped when it returns.',
        inputSchema: {
          thread_id: threadId,
          command: z.string().min(1).max(1_048_576).describe('The line for /bin/bash -c, e.g. "ls -la" or "git log --oneline | head".'),
          cwd: z.string().optional().describe('The folder to run in: /session (the default) or one under it, e.g. /session/src.'),
          timeout_ms: z.number().int().min(100).max(86_400_000).optional().describe('Time limit of this command (clamped to the tenant\'s).'),
          template,
          allow,
        },
      },
      // As for run_python: a client that goes away mid-call stops the command.
      ({ thread_id, command, cwd, timeout_ms, template, allow }, extra) =>
        attempt(async () => {
          const { session } = await this.sessions.create(principal.tenantId, sessionOptions(thread_id, template, allow));
          const run = await this.commands.run(principal, session.id, { command, cwd, timeoutMs: timeout_ms }, undefined, { signal: extra.signal });
          const [rendered, artifact] = renderCommand(toCommandResult(run));
          return text(rendered, artifact.isError === true);
        }),
    );

    server.registerTool(
      'snapshot',
      {
        title: 'Snapshot a thread',
        description:
          "Saves the thread's running session (its Python variables, background processes and files) as a snapshot, between runs; the session goes on. " +
          'Only sessions started with tier "gvisor" can be snapshotted. Answers the snapshot id, for fork: the way to explore two approaches from one state.',
        inputSchema: { thread_id: threadId },
      },
      ({ thread_id }) =>
        attempt(async () => {
          const live = (await this.sessions.list(principal.tenantId, false)).find((s) => s.threadId === thread_id);
          if (!live) return text(`Thread ${thread_id} has no running session to snapshot: run code on it first (with tier "gvisor").`, true);
          const snapshot = await this.snapshots.create(principal.tenantId, live.id);
          return text(`Snapshot ${snapshot.id} of thread ${thread_id} (${(snapshot.sizeBytes / 1024 / 1024).toFixed(1)} MB), kept until ${snapshot.expiresAt}. Fork it with fork.`);
        }),
    );

    server.registerTool(
      'fork',
      {
        title: 'Fork a snapshot',
        description:
          'Starts a new thread from a snapshot (see snapshot): its session has the variables, processes and files the snapshotted one had, and from then on ' +
          'goes its own way (neither thread sees the other\'s later changes). Use the new thread_id with run_python and the file tools.',
        inputSchema: {
          snapshot_id: z.string().min(1).max(64).describe('The id the snapshot tool answered (snp_…).'),
          thread_id: threadId.describe('The new thread: one without a running session.'),
        },
      },
      ({ snapshot_id, thread_id }) =>
        attempt(async () => {
          const { session } = await this.sessions.create(principal.tenantId, { fromSnapshot: snapshot_id, threadId: thread_id });
          return text(`Thread ${session.threadId} now runs a copy of snapshot ${snapshot_id} (session ${session.id}).`);
        }),
    );

    server.registerTool(
      'list_templates',
      {
        title: 'List templates',
        description:
          'The sandbox templates this tenant can start a thread\'s session from (its own and the shared ones), each with its newest version and status; ' +
          'pass one as `template` to run_python or run_command.',
        inputSchema: {},
      },
      () =>
        attempt(async () => {
          const templates = await this.templates.list(principal.tenantId);
          return text(
            templates.length
              ? templates.map((t) => `${t.name}${t.shared ? ' (shared)' : ''}: ${t.latest ? `version ${t.latest.version} ${t.latest.status}` : 'no version'}${t.description ? ` — ${t.description}` : ''}`).join('\n')
              : '(no templates: sessions start from the platform image)',
          );
        }),
    );

    server.registerTool(
      'list_files',
      { title: 'List files', description: "The entries of a directory of the thread's files.", inputSchema: { thread_id: threadId, path: z.string().default('/') } },
      ({ thread_id, path }) =>
        attempt(async () => {
          const entries = await this.vfs.ls(scope(thread_id), path);
          return text(entries.length ? entries.map((e) => `${e.type === 'directory' ? 'dir ' : 'file'} ${e.path}${e.type === 'file' ? ` (${e.size} bytes)` : ''}`).join('\n') : '(empty)');
        }),
    );
    server.registerTool(
      'read_file',
      {
        title: 'Read a file',
        description: 'Lines of a text file, numbered (cat -n); page with offset (0-based line) and limit.',
        inputSchema: { thread_id: threadId, path: z.string(), offset: z.number().int().min(0).optional(), limit: z.number().int().min(1).max(10_000).optional() },
      },
      ({ thread_id, path, offset, limit }) => attempt(async () => text(await this.vfs.read(scope(thread_id), path, { offset, limit }))),
    );
    server.registerTool(
      'write_file',
      { title: 'Write a file', description: 'Creates or replaces a text file.', inputSchema: { thread_id: threadId, path: z.string(), content: z.string() } },
      ({ thread_id, path, content }) =>
        attempt(async () => {
          const { info } = await this.vfs.write(scope(thread_id), path, content);
          return text(`wrote ${info.path} (${info.size} bytes)`);
        }),
    );
    server.registerTool(
      'edit_file',
      {
        title: 'Edit a file',
        description: 'Replaces an exact string in a text file (every occurrence with replace_all; otherwise it must occur once).',
        inputSchema: { thread_id: threadId, path: z.string(), old_string: z.string(), new_string: z.string(), replace_all: z.boolean().default(false) },
      },
      ({ thread_id, path, old_string, new_string, replace_all }) =>
        attempt(async () => {
          const edited = await this.vfs.edit(scope(thread_id), path, old_string, new_string, replace_all);
          return text(`edited ${edited.path} (${edited.occurrences} replaced)`);
        }),
    );
    server.registerTool(
      'glob',
      { title: 'Find files', description: 'Paths matching a glob (*, **, ?, [...], {a,b}).', inputSchema: { thread_id: threadId, pattern: z.string(), path: z.string().default('/') } },
      ({ thread_id, pattern, path }) =>
        attempt(async () => {
          const paths = await this.vfs.glob(scope(thread_id), pattern, path);
          return text(paths.length ? paths.join('\n') : 'no match');
        }),
    );
    server.registerTool(
      'grep',
      {
        title: 'Search files',
        description: 'Lines containing a literal (or, with regex, a regular expression), as path:line: text.',
        inputSchema: { thread_id: threadId, pattern: z.string(), path: z.string().default('/'), glob: z.string().optional(), regex: z.boolean().default(false) },
      },
      ({ thread_id, pattern, path, glob, regex }) =>
        attempt(async () => {
          const found = await this.vfs.grep(scope(thread_id), pattern, { path, glob, regex, outputMode: 'content' });
          const lines = (found.matches ?? []).map((m) => `${m.path}:${m.line}: ${m.text}`);
          return text([...(lines.length ? lines : ['no match']), ...(found.note ? [found.note] : [])].join('\n'));
        }),
    );
    server.registerTool(
      'delete_file',
      { title: 'Delete a file', description: 'Deletes a file, or a directory and everything under it.', inputSchema: { thread_id: threadId, path: z.string() } },
      ({ thread_id, path }) =>
        attempt(async () => {
          const { deleted } = await this.vfs.delete(scope(thread_id), path);
          return text(`deleted ${deleted.length} file(s)`);
        }),
    );
    server.registerTool(
      'list_artifacts',
      {
        title: 'List artifacts',
        description: 'Files runs produced under /session/artifacts/, newest first, as drydock://artifacts/<id> resources.',
        inputSchema: { thread_id: threadId.optional() },
      },
      ({ thread_id }) =>
        attempt(async () => {
          const found = await this.artifacts.list(principal.tenantId, { threadId: thread_id, limit: LISTED_ARTIFACTS });
          return text(found.length ? found.map((a) => `drydock://artifacts/${a.id} ${a.name} (${a.mime}, ${a.size} bytes)`).join('\n') : 'no artifacts');
        }),
    );

    server.registerResource(
      'artifact',
      new ResourceTemplate('drydock://artifacts/{id}', {
        list: async () => ({
          resources: (await this.artifacts.list(principal.tenantId, { limit: LISTED_ARTIFACTS })).map((a) => ({
            uri: `drydock://artifacts/${a.id}`,
            name: a.name,
            mimeType: a.mime,
            description: `${a.path} (${a.size} bytes)`,
          })),
        }),
      }),
      { title: 'Artifact', description: 'A file a run produced, by id.' },
      async (uri, { id }) => {
        const artifactId = String(id);
        const record = await this.artifacts.get(principal.tenantId, artifactId);
        if (record.size > MAX_RESOURCE_BYTES) {
          return {
            contents: [{ uri: uri.href, mimeType: 'text/plain', text: `${record.name} is ${record.size} bytes; download it from GET /v1/artifacts/${artifactId}/content.` }],
          };
        }
        const bytes = await this.artifacts.readBytes(principal.tenantId, artifactId);
        const textual = /^text\/|json|xml|csv|javascript/.test(record.mime);
        return {
          contents: [
            textual
              ? { uri: uri.href, mimeType: record.mime, text: bytes.toString('utf8') }
              : { uri: uri.href, mimeType: record.mime, blob: bytes.toString('base64') },
          ],
        };
      },
    );
    return server;
  }
}
