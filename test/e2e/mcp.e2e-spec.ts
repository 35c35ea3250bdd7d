import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { request as httpRequest } from 'node:http';
import { endedExecution, runningExecution } from './support/executions.js';
import { startPlatform, type Platform } from './support/platform.js';

// The MCP server at /mcp, driven by the official MCP client over Streamable HTTP: the
// sandbox as tools (Python with state, shell commands, the thread's files), artifacts as resources, one
// tenant per API key, threads chosen by the client and never shared across tenants.
describe('MCP server', () => {
  let platform: Platform;
  const clients: Client[] = [];

  beforeAll(async () => {
    platform = await startPlatform();
  });

  afterAll(async () => {
    await Promise.allSettled(clients.map((c) => c.close()));
    await platform?.close();
  });

  const connect = async (apiKey: string): Promise<Client> => {
    const client = new Client({ name: 'drydock-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${platform.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${apiKey}` } } }));
    clients.push(client);
    return client;
  };
  const keyOf = (api: unknown) => (api as { key: string }).key;
  const textOf = (result: unknown) => ((result as { content: { type: string; text?: string }[] }).content.map((c) => c.text ?? '').join('\n'));

  it('should run Python with state, work on the thread\'s files, and serve artifacts as resources', async () => {
    const tenant = await platform.newTenant();
    const client = await connect(keyOf(tenant));
    const tools = (await client.listTools()).tools.map((t) => t.name).sort();
    expect(tools).toEqual(['delete_file', 'edit_file', 'fork', 'glob', 'grep', 'list_artifacts', 'list_files', 'list_templates', 'read_file', 'run_command', 'run_python', 'snapshot', 'write_file']);

    const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: { thread_id: 'mcp-1', ...args } });
    expect((await call('run_python', { code: 'x = 41' })).isError).toBeFalsy();
    expect(textOf(await call('run_python', { code: 'x + 1' }))).toContain('42');
    const failed = await call('run_python', { code: '1 / 0' });
    expect([failed.isError, textOf(failed)]).toEqual([true, expect.stringContaining('ZeroDivisionError')]);

    expect(textOf(await call('write_file', { path: '/notes/todo.md', content: 'ship it\nthen rest\n' }))).toContain('/notes/todo.md');
    expect(textOf(await call('read_file', { path: '/notes/todo.md' }))).toContain('ship it');
    expect(textOf(await call('grep', { pattern: 'rest' }))).toContain('/notes/todo.md:2: then rest');
    expect(textOf(await call('run_python', { code: 'print(open("/session/notes/todo.md").read().split()[0])' }))).toContain('ship');
    const missing = await call('read_file', { path: '/nope.txt' });
    expect([missing.isError, textOf(missing)]).toEqual([true, expect.stringMatching(/^FILE_NOT_FOUND: /)]);

    await call('run_python', { code: 'open("/session/artifacts/report.csv", "w").write("a,b\\n1,2\\n")' });
    const resources = (await client.listResources()).resources;
    const report = resources.find((r) => r.name === 'report.csv')!;
    expect(report.uri).toMatch(/^drydock:\/\/artifacts\/art_/);
    const read = await client.readResource({ uri: report.uri });
    expect(read.contents[0]).toMatchObject({ uri: report.uri, mimeType: 'text/csv', text: 'a,b\n1,2\n' });
  });

  it("should run a shell command in the thread's sandbox beside Python, answering its output and exit code", async () => {
    const client = await connect(keyOf(await platform.newTenant()));
    const call = (name: string, args: Record<string, unknown>) => client.callTool({ name, arguments: { thread_id: 'mcp-shell', ...args } });
    await call('write_file', { path: '/src/a.txt', content: 'one\ntwo\n' });
    expect((await call('run_python', { code: 'kept = 41' })).isError).toBeFalsy();

    const ran = await call('run_command', { command: 'wc -l < a.txt; echo oops >&2; pwd', cwd: '/session/src' });
    expect([ran.isError, textOf(ran)]).toEqual([undefined, '2\n/session/src\noops\n\nExit code: 0']);

    const failed = await call('run_command', { command: 'echo made > made.txt && exit 3' });
    expect([failed.isError, textOf(failed)]).toEqual([true, '(no output)\n\nExit code: 3\n\nfiles changed: /made.txt']);
    expect(textOf(await call('read_file', { path: '/made.txt' }))).toContain('made');
    // The command ran beside the REPL: its variables are still there.
    expect(textOf(await call('run_python', { code: 'kept + 1' }))).toContain('42');

    const slow = await call('run_command', { command: 'echo started; sleep 30', timeout_ms: 1_000 });
    expect([slow.isError, textOf(slow)]).toEqual([true, expect.stringMatching(/^started\n\nTimed out after [\d.]+ s: .*\n\nExit code: none \(timed out\)$/)]);
    const outside = await call('run_command', { command: 'ls', cwd: '/etc' });
    expect([outside.isError, textOf(outside)]).toEqual([true, expect.stringMatching(/^INVALID_CWD: /)]);
  });

  it("should start a thread's session from a template the tenant names, and list the templates it can use", async () => {
    const tenant = await platform.newTenant();
    const client = await connect(keyOf(tenant));
    // A new tenant has none of its own: what it lists is what the operators share, as the API says.
    const shared = (await tenant.get('/v1/templates')).body.templates as { name: string; shared: boolean }[];
    const listed = textOf(await client.callTool({ name: 'list_templates', arguments: {} }));
    if (shared.length === 0) expect(listed).toBe('(no templates: sessions start from the platform image)');
    else expect(listed.split('\n').map((line) => line.split(' ')[0])).toEqual(shared.map((t) => `${t.name}`));
    expect(shared.every((t) => t.shared)).toBe(true);
    // Another tenant's or an unknown template is not found, for the model as for the API.
    const unknown = await client.callTool({ name: 'run_python', arguments: { thread_id: 'mcp-tpl', code: '1', template: 'nope' } });
    expect([unknown.isError, textOf(unknown)]).toEqual([true, 'TEMPLATE_NOT_FOUND: No template "nope".']);
    const command = await client.callTool({ name: 'run_command', arguments: { thread_id: 'mcp-tpl', command: 'true', template: 'nope:2' } });
    expect(textOf(command)).toBe('TEMPLATE_NOT_FOUND: No template "nope:2".');
  });

  it("should start a thread's session with the hosts a call allows, within the tenant's ceiling, and show the model a refusal", async () => {
    const tenant = await platform.newTenant({ network: { allow: ['pypi.org'] } });
    const client = await connect(keyOf(tenant));
    const outside = await client.callTool({ name: 'run_python', arguments: { thread_id: 'mcp-net-x', code: '1', allow: ['evil.test'] } });
    expect(outside.isError).toBe(true);
    expect(textOf(outside)).toMatch(/^NETWORK_NOT_ALLOWED: .*evil\.test/);
    // A host off the list: the proxy refuses it with a 403 the code (and so the model) reads.
    const code = 'import urllib.request, urllib.error\ntry:\n    urllib.request.urlopen("http://elsewhere.test/", timeout=20)\nexcept urllib.error.HTTPError as e:\n    print(e.code, e.read().decode().splitlines()[0])';
    const refused = await client.callTool({ name: 'run_python', arguments: { thread_id: 'mcp-net', code, allow: ['pypi.org'] } });
    expect(textOf(refused)).toContain("403 Drydock egress proxy refused elsewhere.test:80: elsewhere.test:80 is not on this session's allow list (pypi.org)");
    const session = (await tenant.get('/v1/sessions')).body.sessions.find((s: { threadId: string }) => s.threadId === 'mcp-net');
    expect(session.network).toEqual({ allow: ['pypi.org'] });
    const command = await client.callTool({ name: 'run_command', arguments: { thread_id: 'mcp-net', command: 'echo "$HTTP_PROXY"' } });
    expect(textOf(command)).toContain('http://127.0.0.1:3128');
  });

  it('should keep each tenant to its own threads, and refuse a missing key and a GET', async () => {
    const [a, b] = [await platform.newTenant(), await platform.newTenant()];
    const [first, second] = [await connect(keyOf(a)), await connect(keyOf(b))];
    await first.callTool({ name: 'run_python', arguments: { thread_id: 'shared-name', code: 'secret = "a"' } });
    await first.callTool({ name: 'write_file', arguments: { thread_id: 'shared-name', path: '/a.txt', content: 'a' } });
    const probe = await second.callTool({ name: 'run_python', arguments: { thread_id: 'shared-name', code: 'import os\nprint(os.path.exists("/session/a.txt"))\nsecret' } });
    expect(probe.isError).toBe(true);
    expect(textOf(probe)).toContain('False');
    expect(textOf(probe)).toContain('NameError');

    const anonymous = await fetch(`${platform.url}/mcp`, {
      method: 'POST',
      headers: { 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
      body: JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/list' }),
    });
    expect(anonymous.status).toBe(401);
    const get = await fetch(`${platform.url}/mcp`, { headers: { authorization: `Bearer ${keyOf(a)}` } });
    expect(get.status).toBe(405);
  });
  // A tools/call on its own connection (no pool), destroyed once its run is under way: the
  // connection itself goes (a client process that died, a proxy that gave up). The SDK
  // client's own abort only sends notifications/cancelled, which a stateless server
  // cannot tie to the call. Answers the run's record once it has ended.
  const hangUpDuring = async (tenant: Awaited<ReturnType<Platform['newTenant']>>, name: string, args: Record<string, unknown>) => {
    const body = JSON.stringify({ jsonrpc: '2.0', id: 1, method: 'tools/call', params: { name, arguments: args } });
    const call = httpRequest(`${platform.url}/mcp`, {
      method: 'POST',
      agent: false,
      headers: { authorization: `Bearer ${keyOf(tenant)}`, 'content-type': 'application/json', accept: 'application/json, text/event-stream' },
    });
    const closed = new Promise<void>((resolve) => call.on('close', resolve));
    call.on('error', () => undefined);
    call.end(body);
    const id = await runningExecution(platform.admin, tenant.tenantId);
    expect(id).toBeDefined();
    call.destroy();
    await closed;
    return endedExecution(tenant, id);
  };

  it('should interrupt the code of a run_python call whose client went away', async () => {
    const record = await hangUpDuring(await platform.newTenant(), 'run_python', { thread_id: 'gone', code: 'while True: pass', timeout_ms: 240_000 });
    expect(record).toMatchObject({ status: 'error', error: { name: 'KeyboardInterrupt' } });
  });

  it('should stop the command of a run_command call whose client went away', async () => {
    const record = await hangUpDuring(await platform.newTenant(), 'run_command', { thread_id: 'gone', command: 'sleep 240', timeout_ms: 240_000 });
    // ^C to its process group, as a terminal's: long before its time limit.
    expect(record).toMatchObject({ kind: 'command', status: 'error', exitCode: null, signal: 'SIGINT' });
    expect(record.durationMs).toBeLessThan(60_000);
  });
});
