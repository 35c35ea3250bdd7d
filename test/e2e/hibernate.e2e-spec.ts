import { ArtifactsService } from '@drydock/artifacts';
import { Drydock } from '@drydock/client';
import { Client } from '@modelcontextprotocol/sdk/client/index.js';
import { StreamableHTTPClientTransport } from '@modelcontextprotocol/sdk/client/streamableHttp.js';
import { SESSIONS_REPOSITORY, type SessionsRepository } from '@drydock/sessions';
import { readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { pollUntil } from './support/until.js';
import { startPlatform, type Platform } from './support/platform.js';

// Sessions that keep their memory (docs/sessions.md, decision 018), under gVisor
// (SANDBOX_GVISOR_RUNTIME, registered by scripts/lib/services.sh ensure_gvisor): a
// hibernated session's container is gone; its next execution restores it with its
// variables, its background processes and its files.
describe('Hibernate and resume (gVisor)', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ SANDBOX_GVISOR_RUNTIME: 'runsc', SESSION_HIBERNATE_AFTER_MS: '600000' });
  });

  afterAll(async () => {
    await platform?.close();
  });

  const containersOf = async (sessionId: string) =>
    platform.docker.listContainers({ all: true, filters: { label: [`drydock.session=${sessionId}`] } });

  it('should checkpoint a session, remove its container, and resume it with its variables, processes and files', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession({ tier: 'gvisor' });
    expect(session).toMatchObject({ tier: 'gvisor' });
    const setUp = await api.execute(
      session.id,
      'x = 41\nopen("/session/notes.txt", "w").write("kept")\nopen("/tmp/scratch", "w").write("tmp kept")',
    );
    expect(setUp.body).toMatchObject({ status: 'ok' });
    const bg = await api.post(`/v1/sessions/${session.id}/commands`, {
      command: 'i=0; while true; do i=$((i+1)); echo $i > /tmp/ticks; sleep 0.2; done',
      background: true,
    });
    expect(bg.status).toBe(202);
    expect((await containersOf(session.id)).length).toBe(1);

    const hibernated = await api.post(`/v1/sessions/${session.id}/hibernate`);
    expect(hibernated.status).toBe(202);
    expect(hibernated.body).toMatchObject({ id: session.id, status: 'hibernated', tier: 'gvisor' });
    expect(hibernated.body.hibernatedAt).toEqual(expect.any(String));
    expect(await containersOf(session.id)).toEqual([]);
    // The checkpoint is a blob of the artifact store, which its collection keeps.
    const artifacts = platform.gateway.get(ArtifactsService);
    await artifacts.collectGarbage();
    // Asked again: it is hibernated already.
    expect((await api.post(`/v1/sessions/${session.id}/hibernate`)).body).toMatchObject({ status: 'hibernated' });

    const resumed = await api.execute(
      session.id,
      'import os, time\nt0 = int(open("/tmp/ticks").read())\ntime.sleep(1)\nprint(x + 1, open("/session/notes.txt").read(), open("/tmp/scratch").read(), int(open("/tmp/ticks").read()) > t0)',
    );
    expect(resumed.body).toMatchObject({ status: 'ok', stdout: '42 kept tmp kept True\n', stateLost: false });
    expect(resumed.body.resumedMs).toEqual(expect.any(Number));
    expect((await api.get(`/v1/sessions/${session.id}`)).body).toMatchObject({ status: 'ready', hibernatedAt: null });
    const processes = await api.get(`/v1/sessions/${session.id}/processes`);
    expect(processes.body.processes).toEqual([expect.objectContaining({ id: bg.body.id, status: 'running' })]);
  });

  it('should answer 422 CHECKPOINT_NOT_AVAILABLE for a session on the runc tier, which runs on', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession();
    expect(session).toMatchObject({ tier: 'runc' });
    await api.execute(session.id, 'y = 1');
    const res = await api.post(`/v1/sessions/${session.id}/hibernate`);
    expect(res.status).toBe(422);
    expect(res.body.error.code).toBe('CHECKPOINT_NOT_AVAILABLE');
    expect((await api.execute(session.id, 'y')).body).toMatchObject({ status: 'ok', stateLost: false });
  });

  it("should keep tenants to their tiers: TIER_NOT_ALLOWED outside the tenant's, gvisor by default when it is the first", async () => {
    const api = await platform.newTenant({ tiers: ['gvisor'] });
    const refused = await api.post('/v1/sessions', { tier: 'runc' });
    expect(refused.status).toBe(422);
    expect(refused.body.error).toMatchObject({ code: 'TIER_NOT_ALLOWED', details: { allowed: ['gvisor'] } });
    expect(await api.createSession()).toMatchObject({ tier: 'gvisor' });
  });
});

describe('Snapshots and fork (gVisor)', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ SANDBOX_GVISOR_RUNTIME: 'runsc', SESSION_HIBERNATE_AFTER_MS: '600000' });
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should fork two sessions from one snapshot that diverge without seeing each other, the original going on', async () => {
    const api = await platform.newTenant({ snapshotCount: 1 });
    const original = await api.createSession({ tier: 'gvisor', threadId: 'explore' });
    await api.execute(original.id, 'path = ["start"]\nopen("/session/plan.md", "w").write("step 1")');
    const taken = await api.post(`/v1/sessions/${original.id}/snapshots`, {});
    expect(taken.status).toBe(201);
    expect(taken.body).toMatchObject({ id: expect.stringMatching(/^snp_/), sessionId: original.id, tier: 'gvisor', sizeBytes: expect.any(Number) });
    expect(taken.body.expiresAt).toEqual(expect.any(String));
    // The original goes on, with what it had.
    expect((await api.execute(original.id, 'path.append("original"); print(path)')).body).toMatchObject({ stdout: "['start', 'original']\n", stateLost: false });

    const left = await api.createSession({ fromSnapshot: taken.body.id, threadId: 'branch-left' });
    const right = await api.createSession({ fromSnapshot: taken.body.id });
    expect([left, right]).toEqual([
      expect.objectContaining({ threadId: 'branch-left', tier: 'gvisor' }),
      expect.objectContaining({ tier: 'gvisor' }),
    ]);
    await api.execute(left.id, 'path.append("left")\nopen("/session/plan.md", "a").write(", left")');
    await api.execute(right.id, 'path.append("right")');
    expect((await api.execute(left.id, 'print(path, open("/session/plan.md").read())')).body).toMatchObject({ stdout: "['start', 'left'] step 1, left\n", stateLost: false });
    expect((await api.execute(right.id, 'print(path, open("/session/plan.md").read())')).body).toMatchObject({ stdout: "['start', 'right'] step 1\n", stateLost: false });
    // The fork's thread has the snapshot's files.
    const file = await api.get(`/v1/threads/${right.threadId}/files/content?path=/plan.md`);
    expect([file.status, file.body]).toEqual([200, "step 1"]);

    // Listed, counted against the quota (1 here), deleted.
    expect((await api.get('/v1/snapshots')).body.snapshots).toEqual([expect.objectContaining({ id: taken.body.id })]);
    const second = await api.post(`/v1/sessions/${original.id}/snapshots`, {});
    expect([second.status, second.body.error?.code]).toEqual([429, 'SNAPSHOT_QUOTA_EXCEEDED']);
    expect((await api.delete(`/v1/snapshots/${taken.body.id}`)).status).toBe(204);
    expect((await api.get(`/v1/snapshots/${taken.body.id}`)).status).toBe(404);
    const gone = await api.post('/v1/sessions', { fromSnapshot: taken.body.id });
    expect([gone.status, gone.body.error.code]).toEqual([404, 'SNAPSHOT_NOT_FOUND']);
  });

  it("should not let another tenant see or fork a tenant's snapshot, and refuse a tampered one", async () => {
    const owner = await platform.newTenant();
    const other = await platform.newTenant();
    const session = await owner.createSession({ tier: 'gvisor' });
    await owner.execute(session.id, 'secret = "owner only"');
    const taken = (await owner.post(`/v1/sessions/${session.id}/snapshots`, {})).body;
    expect((await other.get(`/v1/snapshots/${taken.id}`)).status).toBe(404);
    expect((await other.get('/v1/snapshots')).body.snapshots).toEqual([]);
    const stolen = await other.post('/v1/sessions', { fromSnapshot: taken.id });
    expect([stolen.status, stolen.body.error.code]).toEqual([404, 'SNAPSHOT_NOT_FOUND']);
    expect((await other.delete(`/v1/snapshots/${taken.id}`)).status).toBe(404);

    // Its stored bytes altered on disk: a fork starts afresh, told its state is lost.
    const record = await platform.gateway.get<SessionsRepository>(SESSIONS_REPOSITORY, { strict: false }).findCheckpoint(owner.tenantId, taken.id);
    const blob = join(process.env.ARTIFACTS_DIR!, 'blobs', record!.sha256.slice(0, 2), record!.sha256.slice(2, 4), record!.sha256);
    const bytes = await readFile(blob);
    bytes[bytes.length >> 1] ^= 0xff;
    await writeFile(blob, bytes);
    const fork = await owner.createSession({ fromSnapshot: taken.id });
    const run = await owner.execute(fork.id, 'print(globals().get("secret"))');
    expect(run.body).toMatchObject({ status: 'ok', stdout: 'None\n', stateLost: true });
    expect(run.body.stateLostReason).toMatch(/^The session's checkpoint could not be restored \(checkpoint snp_\w+ (was altered|could not be read).*\); it starts afresh\.$/);
  });

  it('should hibernate, snapshot, fork, list and delete through the TypeScript SDK', async () => {
    const created = await platform.admin.post('/admin/tenants', { name: 'sdk-snapshots' });
    const dd = new Drydock({ url: platform.url, apiKey: created.body.apiKey });
    const session = await dd.sessions.create({ tier: 'gvisor' });
    await session.run('n = 7');
    expect(await session.hibernate()).toMatchObject({ status: 'hibernated', tier: 'gvisor' });
    const resumed = await session.run('n * 6');
    expect([resumed.result?.text, resumed.stateLost, typeof resumed.resumedMs]).toEqual(['42', false, 'number']);
    const snapshot = await session.snapshot({ ttlSeconds: 3600 });
    expect(snapshot).toMatchObject({ sessionId: session.id, tier: 'gvisor' });
    const fork = await dd.sessions.fork(snapshot.id, { threadId: 'sdk-fork' });
    expect((await fork.run('n + 1')).result?.text).toBe('8');
    expect((await dd.snapshots.list()).map((s) => s.id)).toEqual([snapshot.id]);
    expect(await dd.snapshots.get(snapshot.id)).toMatchObject({ id: snapshot.id });
    await dd.snapshots.delete(snapshot.id);
    await expect(dd.snapshots.get(snapshot.id)).rejects.toMatchObject({ code: 'SNAPSHOT_NOT_FOUND', status: 404 });
  });

  it('should snapshot a thread and fork it into another through the MCP tools', async () => {
    const created = await platform.admin.post('/admin/tenants', { name: 'mcp-snapshots' });
    const client = new Client({ name: 'drydock-e2e', version: '1.0.0' });
    await client.connect(new StreamableHTTPClientTransport(new URL(`${platform.url}/mcp`), { requestInit: { headers: { authorization: `Bearer ${created.body.apiKey}` } } }));
    try {
      const textOf = (result: unknown) => (result as { content: { text?: string }[] }).content.map((c) => c.text ?? '').join('\n');
      await client.callTool({ name: 'run_python', arguments: { thread_id: 'idea', code: 'plan = "A"', tier: 'gvisor' } });
      const snap = textOf(await client.callTool({ name: 'snapshot', arguments: { thread_id: 'idea' } }));
      const id = /snp_[a-z0-9]+/.exec(snap)?.[0];
      expect(id).toBeDefined();
      expect(textOf(await client.callTool({ name: 'fork', arguments: { snapshot_id: id, thread_id: 'idea-b' } }))).toContain('Thread idea-b now runs a copy');
      await client.callTool({ name: 'run_python', arguments: { thread_id: 'idea-b', code: 'plan = "B"' } });
      expect(textOf(await client.callTool({ name: 'run_python', arguments: { thread_id: 'idea', code: 'plan' } }))).toContain("'A'");
      expect(textOf(await client.callTool({ name: 'run_python', arguments: { thread_id: 'idea-b', code: 'plan' } }))).toContain("'B'");
      const none = await client.callTool({ name: 'snapshot', arguments: { thread_id: 'nothing-here' } });
      expect(none.isError).toBe(true);
    } finally {
      await client.close();
    }
  });

  it('should refuse a fork with settings of its own, and a snapshot of a runc session', async () => {
    const api = await platform.newTenant();
    const bad = await api.post('/v1/sessions', { fromSnapshot: 'snp_x', tier: 'gvisor' });
    expect([bad.status, bad.body.error.code]).toEqual([400, 'INVALID_FORK']);
    const runc = await api.createSession();
    const res = await api.post(`/v1/sessions/${runc.id}/snapshots`, {});
    expect([res.status, res.body.error.code]).toEqual([422, 'CHECKPOINT_NOT_AVAILABLE']);
  });
});

describe('Idle sessions hibernate (gVisor)', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ SANDBOX_GVISOR_RUNTIME: 'runsc', SESSION_HIBERNATE_AFTER_MS: '1000', SESSION_IDLE_TIMEOUT_MS: '2500', SESSION_REAPER_INTERVAL_MS: '300' });
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should hibernate a session idle past SESSION_HIBERNATE_AFTER_MS, then resume it on its next execution', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession({ tier: 'gvisor' });
    await api.execute(session.id, 'words = ["kept", "across", "idle"]');
    await pollUntil(async () => (await api.get(`/v1/sessions/${session.id}`)).body.status === 'hibernated', 20_000, 200, 'the idle hibernation');
    const resumed = await api.execute(session.id, 'print(" ".join(words))');
    expect(resumed.body).toMatchObject({ status: 'ok', stdout: 'kept across idle\n', stateLost: false, resumedMs: expect.any(Number) });
  });

  it('should end instead a gvisor session whose own idle action is end, and a runc one', async () => {
    const api = await platform.newTenant();
    const ending = await api.createSession({ tier: 'gvisor', idleAction: 'end' });
    expect(ending).toMatchObject({ idleAction: 'end' });
    const runc = await api.createSession();
    await api.execute(ending.id, 'x = 1');
    await api.execute(runc.id, 'x = 1');
    await pollUntil(
      async () => (await Promise.all([ending, runc].map(async (s) => (await api.get(`/v1/sessions/${s.id}`)).body))).every((v) => v.status === 'ended' && v.endReason === 'idle'),
      20_000,
      200,
      'the idle ends',
    );
  });
});

describe('Hibernated sessions move with a drain (gVisor)', () => {
  let platform: Platform;

  beforeAll(async () => {
    platform = await startPlatform({ SANDBOX_GVISOR_RUNTIME: 'runsc', WORKER_HEARTBEAT_MS: '300', WORKER_DRAIN_TIMEOUT_MS: '20000' });
  });

  afterAll(async () => {
    await platform?.close();
  });

  it('should resume on another worker a session hibernated before the drain, and one the drain hibernated', async () => {
    const api = await platform.newTenant();
    const before = await api.createSession({ tier: 'gvisor', threadId: 'hibernated-first' });
    const during = await api.createSession({ tier: 'gvisor', threadId: 'live-at-the-drain' });
    expect([before.workerId, during.workerId]).toEqual([platform.workerId, platform.workerId]);
    await api.execute(before.id, 'a = "hibernated on A"');
    await api.execute(during.id, 'b = "live on A"');
    expect((await api.post(`/v1/sessions/${before.id}/hibernate`)).status).toBe(202);
    const other = await platform.addWorker();
    try {
      expect((await platform.admin.post(`/admin/workers/${platform.workerId}/drain`, {})).status).toBe(202);
      await pollUntil(
        async () => (await platform.admin.get('/admin/workers')).body.workers.some((w: { id: string; state: string }) => w.id === platform.workerId && w.state === 'drained'),
        60_000,
        200,
        'the drain',
      );
      // The drain checkpointed the live one instead of losing it.
      expect((await api.get(`/v1/sessions/${during.id}`)).body).toMatchObject({ status: 'hibernated' });
      for (const [session, code, out] of [
        [before, 'print(a)', 'hibernated on A\n'],
        [during, 'print(b)', 'live on A\n'],
      ] as const) {
        const run = await api.execute(session.id, code);
        expect(run.body).toMatchObject({ status: 'ok', stdout: out, stateLost: false });
        expect((await api.get(`/v1/sessions/${session.id}`)).body).toMatchObject({ status: 'ready', workerId: other.id });
      }
    } finally {
      await other.stop();
    }
  });
});
