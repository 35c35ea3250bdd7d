import { execFile } from 'node:child_process';
import { promisify } from 'node:util';
import { DataSource } from 'typeorm';
import { AIMessage, HumanMessage, ToolMessage, type BaseMessage } from '@langchain/core/messages';
import { AGENT_RUNTIME, ScriptedModelProvider, type AgentRuntime, type ChatScript } from '@drydock/agents';
import { platformRuntimeVolumeName } from '@drydock/docker-sandbox';
import { TemplatePools } from '@drydock/session-host';
import { TemplateMaintenance } from '@drydock/templates';
import { createServer } from 'node:net';
import type { ApiClient } from './support/api-client.js';
import { startPlatform, type Platform } from './support/platform.js';
import { pollUntil } from './support/until.js';

const run = promisify(execFile);
type Tenant = ApiClient & { tenantId: string };
type SseEvent = { event: string; data: any };

// Templates (issue 52, API.md "Templates", docs/templates.md) against the real
// services: builds through the engine's build API with their log streamed, the
// platform's final layer, the registry scripts/test.sh starts, sessions on any worker.
describe('Templates', () => {
  let platform: Platform;
  let a: Tenant;
  let b: Tenant;
  let second: Awaited<ReturnType<Platform['addWorker']>>;
  const registry = process.env.TEMPLATE_REGISTRY!;
  // The agent's model, scripted per test.
  let script: ChatScript = () => new AIMessage('no script');
  const env = { WORKER_POOL_SIZE: '0', WORKER_BATCH_CONCURRENCY: '3', BATCH_TENANT_CONCURRENCY: '6', BATCH_RECYCLE_SANDBOXES: 'false' };

  let metricsPort: number;

  beforeAll(async () => {
    if (!registry) throw new Error('TEMPLATE_REGISTRY is not set: run the tests through scripts/test.sh, which starts the registry');
    metricsPort = await new Promise<number>((resolve) => {
      const server = createServer().listen(0, '127.0.0.1', () => {
        const { port } = server.address() as { port: number };
        server.close(() => resolve(port));
      });
    });
    platform = await startPlatform({ ...env, WORKER_METRICS_PORT: String(metricsPort) }, { chatModels: new ScriptedModelProvider(() => (turn) => script(turn)) });
    a = await platform.newTenant();
    b = await platform.newTenant();
  });

  afterAll(async () => {
    // Shared templates are every tenant's: this suite's goes with it.
    await platform?.admin.delete('/admin/templates/shared-motd');
    await platform?.close();
  });

  // The build log as server-sent events, each with the version's status when it came.
  async function follow(api: ApiClient, path: string, statusOf?: () => Promise<string>): Promise<(SseEvent & { statusThen?: string })[]> {
    const res = await fetch(`${api.baseUrl}${path}`, { headers: api.authHeaders });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toContain('text/event-stream');
    const events: (SseEvent & { statusThen?: string })[] = [];
    const decoder = new TextDecoder();
    let buffer = '';
    for await (const chunk of res.body as unknown as AsyncIterable<Uint8Array>) {
      buffer += decoder.decode(chunk, { stream: true });
      let end: number;
      while ((end = buffer.indexOf('\n\n')) >= 0) {
        const block = buffer.slice(0, end);
        buffer = buffer.slice(end + 2);
        const event = /^event: (.*)$/m.exec(block)?.[1];
        const data = /^data: (.*)$/m.exec(block)?.[1];
        if (!event || data === undefined) continue;
        const parsed: SseEvent & { statusThen?: string } = { event, data: JSON.parse(data) };
        if (statusOf && events.length === 0) parsed.statusThen = await statusOf();
        events.push(parsed);
      }
    }
    return events;
  }

  async function build(api: ApiClient, body: Record<string, unknown>, prefix = '/v1/templates') {
    const res = await api.post(prefix, body);
    expect([res.status, res.body]).toEqual([202, { name: body.name, version: expect.any(Number), status: 'building' }]);
    const events = await follow(api, `${prefix}/${body.name as string}/versions/${res.body.version}/logs`);
    const done = events.at(-1)!;
    expect(done.event).toBe('done');
    return { version: res.body.version as number, events, lines: events.filter((e) => e.event === 'log').map((e) => e.data.line as string), done: done.data };
  }

  async function output(api: ApiClient, sessionId: string, code: string): Promise<string> {
    const res = await api.execute(sessionId, code);
    expect([res.status, res.body.status, res.body.stderr]).toEqual([200, 'ok', '']);
    return res.body.stdout as string;
  }

  let sqliteVersion: number;

  it('should build a template that installs a Debian package, with its log streamed as it builds', async () => {
    const body = {
      name: 'sqlite',
      description: 'SQLite on the command line',
      dockerfile: [
        'FROM drydock',
        'RUN apt-get update -q && apt-get install -y -q --no-install-recommends sqlite3 && rm -rf /var/lib/apt/lists/*',
        'COPY schema.sql /opt/schema.sql',
      ].join('\n'),
      files: { 'schema.sql': 'CREATE TABLE t (x INTEGER);\nINSERT INTO t VALUES (42);\n' },
    };
    const created = await a.post('/v1/templates', body);
    expect(created.status).toBe(202);
    sqliteVersion = created.body.version;
    const statusOf = async () => (await a.get('/v1/templates/sqlite')).body.versions.at(-1).status as string;
    const events = await follow(a, `/v1/templates/sqlite/versions/${sqliteVersion}/logs`, statusOf);
    // The first line came while the version was still building: the log is streamed.
    expect(events[0]).toMatchObject({ event: 'log', statusThen: 'building' });
    const lines = events.filter((e) => e.event === 'log').map((e) => e.data.line as string);
    expect(lines).toContainEqual(expect.stringMatching(/^Step 2\/3 : RUN apt-get update/));
    expect(lines).toContainEqual(expect.stringMatching(/sqlite3/));
    expect(lines).toContain('drydock: self-test passed');
    expect(events.at(-1)).toEqual({ event: 'done', data: { status: 'ready', error: null } });

    const template = (await a.get('/v1/templates/sqlite')).body;
    expect(template).toMatchObject({ name: 'sqlite', shared: false, description: 'SQLite on the command line', poolSize: 0 });
    expect(template.versions.at(-1)).toMatchObject({ version: sqliteVersion, status: 'ready', imageDigest: expect.stringMatching(/^sha256:[0-9a-f]{64}$/), error: null });
    expect(template.versions.at(-1).sizeBytes).toBeGreaterThan(1e8);
    const list = (await a.get('/v1/templates')).body.templates;
    expect(list).toContainEqual(expect.objectContaining({ name: 'sqlite', shared: false, latest: { version: sqliteVersion, status: 'ready' } }));

    // The registry is real: its catalog lists the template's repository.
    const catalog = (await (await fetch(`http://${registry}/v2/_catalog?n=1000`)).json()) as { repositories: string[] };
    const rows: { id: string }[] = await platform.gateway.get(DataSource).query(`SELECT id FROM templates WHERE tenant_id = $1 AND name = 'sqlite'`, [a.tenantId]);
    expect(catalog.repositories).toContain(`drydock-templates/${rows[0]!.id}`);
  }, 300_000); // The first push to a fresh registry carries the whole platform image.

  it('should start sessions from it, by name and by version, where the package works', async () => {
    const session = await a.createSession({ template: 'sqlite' });
    expect((await a.get(`/v1/sessions/${session.id}`)).body.template).toBe(`sqlite:${sqliteVersion}`);
    const out = await output(a, session.id, [
      'import subprocess, os',
      'r = subprocess.run(["sqlite3", ":memory:", ".read /opt/schema.sql", "SELECT x FROM t"], capture_output=True, text=True)',
      'print(r.stdout.strip(), os.getuid())',
    ].join('\n'));
    expect(out).toBe('42 10001\n');
    // Commands run on it too.
    const command = await a.post(`/v1/sessions/${session.id}/commands`, { command: 'sqlite3 --version | cut -c1-2' });
    expect([command.status, command.body.stdout]).toEqual([200, '3.\n']);
    const pinned = await a.createSession({ template: `sqlite:${sqliteVersion}` });
    expect((await a.get(`/v1/sessions/${pinned.id}`)).body.template).toBe(`sqlite:${sqliteVersion}`);
  });

  it('should fail a build at a failing RUN, naming the step and its output', async () => {
    const { done, lines } = await build(a, { name: 'broken', dockerfile: 'FROM drydock\nRUN echo first-step\nRUN echo about to fail >&2 && exit 3\n' });
    expect(done.status).toBe('failed');
    expect(done.error).toMatch(/^step 3\/3 \(RUN echo about to fail >&2 && exit 3\) failed: .*returned a non-zero code: 3\nabout to fail$/);
    expect(lines).toContain('first-step');
    const version = (await a.get('/v1/templates/broken')).body.versions[0];
    expect(version).toMatchObject({ status: 'failed', imageDigest: null, error: done.error });
    // Not ready: 409, whatever reference names it.
    const session = await a.post('/v1/sessions', { template: 'broken' });
    expect([session.status, session.body.error.code]).toEqual([409, 'TEMPLATE_NOT_READY']);
    expect(session.body.error.message).toBe('Template "broken" is not ready: none of its versions built.');
    expect((await a.post('/v1/sessions', { template: 'broken:1' })).body.error.code).toBe('TEMPLATE_NOT_READY');
    // The log of an ended build is there after the fact.
    const again = await follow(a, '/v1/templates/broken/versions/1/logs');
    expect(again.map((e) => e.event).at(-1)).toBe('done');
    expect(again.filter((e) => e.event === 'log').map((e) => e.data.line)).toEqual(lines);
  });

  it('should keep the platform layer in force whatever the Dockerfile does to users, the supervisor and setuid bits', async () => {
    const { done, lines } = await build(a, {
      name: 'hostile',
      dockerfile: [
        'FROM drydock',
        // The supervisor replaced, a setuid root shell, a library preloaded into every
        // program, the sandbox user made root, the image's user and entrypoint changed.
        'RUN echo "raise SystemExit(7)" > /opt/drydock/repl/supervisor.py',
        'RUN cp /bin/bash /usr/local/bin/rootsh && chmod 4755 /usr/local/bin/rootsh && chmod g+s /usr/bin/python3.11',
        'RUN echo /nonexistent/evil.so > /etc/ld.so.preload',
        'RUN sed -i "s/^sandbox:x:10001:10001:/sandbox:x:0:0:/" /etc/passwd && echo "supervisor:x:0:0::/root:/bin/bash" >> /etc/passwd',
        'ENV LD_PRELOAD=/nonexistent/evil.so',
        'USER root',
        'ENTRYPOINT ["/bin/sh", "-c", "exec sleep 1000"]',
        'CMD ["id"]',
      ].join('\n'),
    });
    expect([done.status, done.error]).toEqual(['ready', null]);
    expect(lines).toContain("drydock: the template's /etc/ld.so.preload is removed (it preloaded /nonexistent/evil.so)");
    expect(lines).toContain('drydock: removed the setuid/setgid bit of /usr/local/bin/rootsh');

    const session = await a.createSession({ template: 'hostile' });
    const out = JSON.parse(
      await output(a, session.id, [
        'import json, os, stat, subprocess, hashlib',
        'setid = subprocess.run("find / -xdev -type f \\\\( -perm -4000 -o -perm -2000 \\\\) -print", shell=True, capture_output=True, text=True).stdout.split()',
        'passwd = [l for l in open("/etc/passwd").read().splitlines() if l.startswith(("sandbox:", "supervisor:"))]',
        'sup = open("/opt/drydock/repl/supervisor.py").read()',
        'print(json.dumps({"ids": list(os.getresuid()), "setid": setid, "preload": os.path.exists("/etc/ld.so.preload"),',
        '  "passwd": passwd, "supervisorIntact": "raise SystemExit(7)" not in sup and "def main" in sup,',
        '  "ldPreload": os.environ.get("LD_PRELOAD"), "rootsh": oct(os.stat("/usr/local/bin/rootsh").st_mode)}))',
      ].join('\n')),
    );
    expect(out).toEqual({
      ids: [10001, 10001, 10001],
      setid: [],
      preload: false,
      passwd: ['sandbox:x:10001:10001::/session:/usr/sbin/nologin', 'supervisor:x:10002:10002::/nonexistent:/usr/sbin/nologin'],
      supervisorIntact: true,
      ldPreload: null,
      rootsh: '0o100755',
    });
    // The container runs the platform's command and user, not the Dockerfile's.
    const container = await platform.containerOf(session.id);
    expect(container.Config.Entrypoint ?? []).toEqual([]);
    expect(container.Config.Cmd?.slice(-1)).toEqual(['/opt/drydock/repl/supervisor.py']);
    expect(container.Config.Labels?.['drydock.tenant']).toBe(a.tenantId);
  });

  it('should refuse what a template may not do, with a sentence for each', async () => {
    const refused = await a.post('/v1/templates', {
      name: 'refused',
      dockerfile: 'FROM python:3.12\nFROM drydock\nVOLUME /data\nONBUILD RUN id\nADD https://example.com/x.tgz /opt/\n',
    });
    expect([refused.status, refused.body.error.code]).toEqual([400, 'INVALID_DOCKERFILE']);
    expect(refused.body.error.details.problems).toEqual([
      expect.stringMatching(/^line 1: FROM python:3.12 is not allowed/),
      expect.stringMatching(/^line 3: VOLUME is not allowed/),
      expect.stringMatching(/^line 4: ONBUILD is not allowed/),
      expect.stringMatching(/^line 5: ADD https:\/\/example.com\/x.tgz is not allowed/),
    ]);
    expect((await a.get('/v1/templates/refused')).status).toBe(404);
    const badPath = await a.post('/v1/templates', { name: 'paths', dockerfile: 'FROM drydock', files: { '../escape': 'x' } });
    expect([badPath.status, badPath.body.error.code]).toEqual([400, 'INVALID_TEMPLATE_CONTEXT']);
    const badName = await a.post('/v1/templates', { name: 'Upper Case', dockerfile: 'FROM drydock' });
    expect([badName.status, badName.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
    // What the image says is checked after the build: a variable the supervisor would read.
    const { done } = await build(a, { name: 'env', dockerfile: 'FROM drydock\nENV DRYDOCK_ZYGOTE_PRELOAD=evil\n' });
    expect(done).toEqual({ status: 'failed', error: 'The image cannot be used: it sets DRYDOCK_ZYGOTE_PRELOAD, which a template may not set.' });
  });

  it("should keep a tenant's templates from another tenant, and share the operators' with both", async () => {
    expect((await b.get('/v1/templates/sqlite')).status).toBe(404);
    expect((await b.get('/v1/templates')).body.templates.map((t: { name: string }) => t.name)).not.toContain('sqlite');
    const used = await b.post('/v1/sessions', { template: 'sqlite' });
    expect([used.status, used.body.error.code]).toEqual([404, 'TEMPLATE_NOT_FOUND']);
    expect((await b.get(`/v1/templates/sqlite/versions/${sqliteVersion}/logs`)).status).toBe(404);
    expect((await b.delete('/v1/templates/sqlite')).status).toBe(404);

    const shared = await build(platform.admin, { name: 'shared-motd', dockerfile: 'FROM drydock\nCOPY motd /etc/drydock-motd\n', files: { motd: 'for everyone\n' } }, '/admin/templates');
    expect(shared.done.status).toBe('ready');
    for (const tenant of [a, b]) {
      expect((await tenant.get('/v1/templates')).body.templates).toContainEqual(expect.objectContaining({ name: 'shared-motd', shared: true }));
      const session = await tenant.createSession({ template: 'shared-motd' });
      expect(await output(tenant, session.id, 'print(open("/etc/drydock-motd").read(), end="")')).toBe('for everyone\n');
    }
    // A tenant cannot delete what the operators share.
    const deleted = await a.delete('/v1/templates/shared-motd');
    expect([deleted.status, deleted.body.error.code]).toEqual([403, 'TEMPLATE_SHARED']);
  });

  it('should keep a warm pool of a template as the operator sets it, shown in /admin/workers and the metrics', async () => {
    const patched = await platform.admin.request('PATCH', '/admin/templates/shared-motd', { json: { poolSize: 1 } });
    expect([patched.status, patched.body.poolSize]).toEqual([200, 1]);
    const ref = `shared-motd:${patched.body.versions.at(-1).version}`;
    // Workers read pool sizes every TEMPLATE_POOL_SYNC_MS; this one is asked now.
    await platform.worker.get(TemplatePools).sync();
    const poolOf = async () => {
      const workers = (await platform.admin.get('/admin/workers')).body.workers as { id: string; pool: { templates?: { template: string; ready: number; size: number }[] } }[];
      return workers.find((w) => w.id === platform.workerId)!.pool.templates?.find((t) => t.template === ref);
    };
    await pollUntil(async () => (await poolOf())?.ready === 1, 30_000, 200, 'the template pool to fill');
    expect(await poolOf()).toEqual({ template: ref, size: 1, ready: 1, starting: 0 });
    const metrics = await (await fetch(`http://127.0.0.1:${metricsPort}/metrics`)).text();
    expect(metrics).toContain(`drydock_sandboxes_pooled{pool="${ref}"} 1`);

    // A session of the template takes the pooled sandbox: started before any tenant, its own from now on.
    const pooled = (await platform.docker.listContainers({ filters: { label: [`drydock.worker=${platform.workerId}`, 'drydock.template.id'] } }))
      .filter((c) => c.Labels['drydock.session']!.startsWith('pool-'))
      .map((c) => c.Id);
    expect(pooled).toHaveLength(1);
    const session = await b.createSession({ template: 'shared-motd' });
    expect((await platform.containerOf(session.id)).Id).toBe(pooled[0]);
    expect(await output(b, session.id, 'print(open("/etc/drydock-motd").read(), end="")')).toBe('for everyone\n');
    // The default image's sessions never get it; the pool refills for the next one.
    const plain = await b.createSession();
    expect((await platform.containerOf(plain.id)).Id).not.toBe(pooled[0]);
    await pollUntil(async () => (await poolOf())?.ready === 1, 30_000, 200, 'the template pool to refill');

    expect((await platform.admin.request('PATCH', '/admin/templates/shared-motd', { json: { poolSize: 0 } })).body.poolSize).toBe(0);
    await platform.worker.get(TemplatePools).sync();
    await pollUntil(async () => (await poolOf()) === undefined, 10_000, 200, 'the template pool to go');
    const bad = await platform.admin.request('PATCH', '/admin/templates/shared-motd', { json: { poolSize: 99 } });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'VALIDATION_FAILED']);
  });

  it("should start an agent's thread sessions from its definition's template", async () => {
    const created = await a.post('/v1/agents', { name: 'sql-analyst', template: 'sqlite', tools: ['execute'] });
    expect([created.status, created.body.template]).toEqual([201, 'sqlite']);
    const refused = await b.post('/v1/agents', { name: 'borrower', template: 'sqlite' });
    expect([refused.status, refused.body.error.code]).toEqual([404, 'TEMPLATE_NOT_FOUND']);

    script = (turn) =>
      turn.step === 0
        ? new AIMessage({ content: '', tool_calls: [{ id: 'c1', name: 'execute', args: { command: 'sqlite3 :memory: "select 6*7"' }, type: 'tool_call' }] })
        : new AIMessage('done');
    const runtime = platform.gateway.get<AgentRuntime>(AGENT_RUNTIME);
    const config = await runtime.runConfig(a.tenantId, 'sql-thread', created.body.id);
    const state = (await runtime.graph.invoke({ messages: [new HumanMessage('compute')] }, config)) as { messages: BaseMessage[] };
    const tool = state.messages.find((m) => ToolMessage.isInstance(m)) as ToolMessage;
    expect(String(tool.content)).toMatch(/^42\n/);
    const session = (await a.get('/v1/sessions')).body.sessions.find((s: { threadId: string }) => s.threadId === 'sql-thread');
    expect(session.template).toBe(`sqlite:${sqliteVersion}`);
  });

  it('should run a batch from the template, its items on every worker', async () => {
    second = await platform.addWorker({ ...env, WORKER_METRICS_PORT: '0' });
    const items = Array.from({ length: 12 }, (_, i) => ({
      code: `import subprocess, time\ntime.sleep(0.5)\nprint(subprocess.run(["sqlite3", ":memory:", "select ${i} * 2"], capture_output=True, text=True).stdout.strip())`,
    }));
    const submitted = await a.post('/v1/batches', { template: 'sqlite', concurrency: 6, items });
    expect(submitted.status).toBe(202);
    let batch;
    for (const deadline = Date.now() + 120_000; ; ) {
      batch = (await a.get(`/v1/batches/${submitted.body.id}`)).body;
      if (batch.status === 'completed') break;
      if (Date.now() > deadline) throw new Error(`batch did not finish: ${JSON.stringify(batch)}`);
      await new Promise((r) => setTimeout(r, 200));
    }
    expect([batch.template, batch.counts.ok]).toEqual([`sqlite:${sqliteVersion}`, 12]);
    const results = (await a.get(`/v1/batches/${submitted.body.id}/items?limit=100`)).body.items.map((item: { stdout: string }) => item.stdout);
    expect(results).toEqual(items.map((_, i) => `${i * 2}\n`));
    const workers: { worker_id: string }[] = await platform.gateway
      .get(DataSource)
      .query('SELECT DISTINCT worker_id FROM batch_items WHERE batch_id = $1', [submitted.body.id]);
    expect(workers.map((w) => w.worker_id)).toEqual(expect.arrayContaining([platform.workerId, second.id]));
    // Another tenant cannot run a batch on it.
    const refused = await b.post('/v1/batches', { template: 'sqlite', items: [{ code: '1' }] });
    expect([refused.status, refused.body.error.code]).toEqual([404, 'TEMPLATE_NOT_FOUND']);
  });

  it('should pull a template built on one worker to another worker that needs it', async () => {
    // The engine is this machine's, shared by both workers: the image leaves it, so that
    // the second worker can only have it from the registry.
    const rows: { image: string }[] = await platform.gateway.get(DataSource).query(`SELECT image FROM sessions WHERE tenant_id = $1 AND template = $2 LIMIT 1`, [a.tenantId, `sqlite:${sqliteVersion}`]);
    const imageRef = rows[0]!.image;
    for (const s of (await a.get('/v1/sessions')).body.sessions) await a.delete(`/v1/sessions/${s.id}`);
    await run('docker', ['rmi', '-f', imageRef, `${imageRef.split('@')[0]}:${sqliteVersion}`]);
    await platform.stopWorker();
    const session = await a.createSession({ template: 'sqlite' });
    expect(session.workerId).toBe(second.id);
    expect(await output(a, session.id, 'import subprocess; print(subprocess.run(["sqlite3", "--version"], capture_output=True, text=True).stdout[:2])')).toBe('3.\n');
    const pulled = (await run('docker', ['image', 'inspect', '-f', '{{json .RepoDigests}}', imageRef])).stdout;
    expect(JSON.parse(pulled)).toContain(imageRef);
    await a.delete(`/v1/sessions/${session.id}`);

    // Deleting the template: no session starts from it, and once none uses it its image
    // leaves the registry (the maintenance pass) and the worker's engine (its sweep).
    expect((await a.delete('/v1/templates/sqlite')).status).toBe(204);
    expect((await a.post('/v1/sessions', { template: 'sqlite' })).body.error.code).toBe('TEMPLATE_NOT_FOUND');
    const maintenance = second.app.get(TemplateMaintenance);
    expect((await maintenance.run()).purged).toBeGreaterThanOrEqual(1);
    const [host, rest] = [imageRef.split('/')[0], imageRef.slice(imageRef.indexOf('/') + 1)];
    const [repository, digest] = rest!.split('@');
    const manifest = await fetch(`http://${host}/v2/${repository}/manifests/${digest}`, { headers: { accept: 'application/vnd.docker.distribution.manifest.v2+json' } });
    expect(manifest.status).toBe(404);
    // The worker's sweep (each WORKER_ORPHAN_SWEEP_MS) removes it once the ended
    // session's container is gone.
    await pollUntil(
      async () => {
        await maintenance.sweepLocalImages();
        return run('docker', ['image', 'inspect', imageRef]).then(() => false, () => true);
      },
      30_000,
      500,
      'the deleted template image to leave the engine',
    );
    // The runtime volume of a platform image no longer run goes with the sweep; the
    // current one, which templates' sandboxes mount, stays.
    await platform.docker.createVolume({ Name: 'drydock-runtime-e2e-stale', Labels: { 'drydock.role': 'platform-runtime', 'drydock.platform-image': 'sha256:e2e-stale' } });
    await maintenance.sweepLocalImages();
    await expect(platform.docker.getVolume('drydock-runtime-e2e-stale').inspect()).rejects.toThrow();
    const current = (await platform.docker.getImage(process.env.SANDBOX_IMAGE ?? 'drydock/sandbox:latest').inspect()).Id;
    expect((await platform.docker.getVolume(platformRuntimeVolumeName(current)).inspect()).Labels['drydock.platform-image']).toBe(current);
  });
});
