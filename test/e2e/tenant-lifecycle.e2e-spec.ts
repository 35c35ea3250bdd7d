import { existsSync } from 'node:fs';
import { join } from 'node:path';
import { AIMessage } from '@langchain/core/messages';
import { DataSource } from 'typeorm';
import { AGENT_RUNTIME, ScriptedModelProvider, type AgentRuntime } from '@drydock/agents';
import { TemplateMaintenance } from '@drydock/templates';
import { startPlatform, type Platform } from './support/platform.js';
import { pollUntil } from './support/until.js';

// An operator suspends, resumes and deletes tenants (POST /admin/tenants/:id/suspend,
// /resume, DELETE /admin/tenants/:id). Deleting removes everything the tenant owns,
// proven by counting its rows in every table that has a tenant_id (and its agent
// checkpoints, containers and unshared blobs) before and after, next to a tenant that
// keeps all of its own.
describe('Tenant suspension and deletion', () => {
  let platform: Platform;
  let db: DataSource;

  // When set, the next model call waits at it (a run under way while its tenant goes).
  let hold: { reached: () => void; released: Promise<void> } | null = null;
  let modelCalls = 0;

  beforeAll(async () => {
    const answer = async () => {
      modelCalls++;
      const held = hold;
      hold = null;
      if (held) {
        held.reached();
        await held.released;
      }
      return new AIMessage('noted');
    };
    // The gvisor tier offered: a tenant's snapshots are among what it owns.
    platform = await startPlatform({ SANDBOX_GVISOR_RUNTIME: 'runsc' }, { chatModels: new ScriptedModelProvider(() => answer) });
    db = platform.gateway.get(DataSource);
  });

  afterAll(async () => {
    await platform?.close();
  });

  const containerOf = async (sessionId: string): Promise<string> =>
    (await db.query('SELECT container_id FROM sessions WHERE id = $1', [sessionId]))[0].container_id;
  const containerExists = async (id: string) => (await platform.docker.listContainers({ all: true, filters: { id: [id] } })).length > 0;
  const until = (check: () => Promise<boolean>, timeoutMs = 30_000) => pollUntil(check, timeoutMs, 100);

  it('should answer 403 TENANT_SUSPENDED to a suspended tenant, end its sessions, and let it back in on resume', async () => {
    const api = await platform.newTenant();
    const session = await api.createSession({ threadId: 'suspended' });
    expect((await api.execute(session.id, 'x = 1')).body.status).toBe('ok');
    const container = await containerOf(session.id);

    const suspended = await platform.admin.post(`/admin/tenants/${api.tenantId}/suspend`);
    expect(suspended.status).toBe(200);
    expect(suspended.body.suspendedAt).toEqual(expect.any(String));
    for (const res of [await api.get('/v1/sessions'), await api.execute(session.id, 'x'), await api.post('/v1/batches', { items: [{ code: '1' }] })]) {
      expect([res.status, res.body.error?.code]).toEqual([403, 'TENANT_SUSPENDED']);
    }
    expect((await db.query('SELECT status, end_reason FROM sessions WHERE id = $1', [session.id]))[0]).toEqual({
      status: 'ended',
      end_reason: 'tenant-suspended',
    });
    await until(async () => !(await containerExists(container)));

    const resumed = await platform.admin.post(`/admin/tenants/${api.tenantId}/resume`);
    expect(resumed.body.suspendedAt).toBeNull();
    const again = await api.createSession({ threadId: 'suspended' });
    expect((await api.execute(again.id, 'print("back")')).body).toMatchObject({ status: 'ok', stdout: 'back\n' });
    expect((await platform.admin.post('/admin/tenants/ten_nobody/suspend')).status).toBe(404);
  });

  it('should hold a suspended tenant\'s batch items until it is resumed', async () => {
    const api = await platform.newTenant();
    const items = Array.from({ length: 6 }, (_, i) => ({ code: `import time; time.sleep(0.3); print(${i})` }));
    const batch = await api.post('/v1/batches', { items, concurrency: 1 });
    expect(batch.status).toBe(202);
    await platform.admin.post(`/admin/tenants/${api.tenantId}/suspend`);
    const counts = async () =>
      (await db.query('SELECT status, count(*)::int AS n FROM batch_items WHERE batch_id = $1 GROUP BY status ORDER BY status', [batch.body.id])) as {
        status: string;
        n: number;
      }[];
    // What was admitted before the suspension finishes; the rest waits.
    await until(async () => (await counts()).every((c) => c.status === 'queued' || c.status === 'ok'));
    const held = await counts();
    await new Promise((r) => setTimeout(r, 1_000));
    expect(await counts()).toEqual(held);
    expect(held.find((c) => c.status === 'queued')?.n).toBeGreaterThan(0);

    await platform.admin.post(`/admin/tenants/${api.tenantId}/resume`);
    await until(async () => (await api.get(`/v1/batches/${batch.body.id}`)).body.status === 'completed');
    expect((await api.get(`/v1/batches/${batch.body.id}`)).body.counts.ok).toBe(6);
  });

  // It builds two templates: the first push to a fresh registry carries the whole
  // platform image, which takes a minute or more on a slow day.
  it('should delete everything a tenant owns and nothing of another tenant', async () => {
    const tables: string[] = (
      await db.query(
        `SELECT table_name FROM information_schema.columns
          WHERE table_schema = 'public' AND column_name = 'tenant_id' ORDER BY table_name`,
      )
    ).map((r: { table_name: string }) => r.table_name);
    const rowsOf = async (tenantId: string) => {
      const counts: Record<string, number> = {};
      for (const table of [...tables, 'tenants']) {
        const column = table === 'tenants' ? 'id' : 'tenant_id';
        counts[table] = (await db.query(`SELECT count(*)::int AS n FROM ${table} WHERE ${column} = $1`, [tenantId]))[0].n;
      }
      counts['langgraph.checkpoints'] = (
        await db.query(`SELECT count(*)::int AS n FROM langgraph.checkpoints WHERE left(thread_id, length($1)) = $1`, [`${tenantId}:`])
      )[0].n;
      return counts;
    };
    const blobPath = (sha256: string) => join(process.env.ARTIFACTS_DIR!, 'blobs', sha256.slice(0, 2), sha256.slice(2, 4), sha256);
    const blobFiles = async (tenantId: string): Promise<{ sha256: string; onDisk: boolean }[]> =>
      ((await db.query('SELECT DISTINCT sha256 FROM artifacts WHERE tenant_id = $1 ORDER BY 1', [tenantId])) as { sha256: string }[]).map(
        ({ sha256 }) => ({ sha256, onDisk: existsSync(blobPath(sha256)) }),
      );

    // Two tenants with one of everything; one artifact's bytes are the same for both.
    // With a network ceiling, so a refused connection puts a row in the egress log.
    const ceiling = { network: { allow: ['nowhere.test'] } };
    const [doomed, kept] = [await platform.newTenant(ceiling), await platform.newTenant(ceiling)];
    const sessions: Record<string, string> = {};
    for (const api of [doomed, kept]) {
      // A snapshot of a gvisor session (the session ended since; the snapshot stays).
      const isolated = await api.createSession({ threadId: 'snapshotted', tier: 'gvisor' });
      await api.execute(isolated.id, 'x = 1');
      expect((await api.post(`/v1/sessions/${isolated.id}/snapshots`, {})).status).toBe(201);
      expect((await api.delete(`/v1/sessions/${isolated.id}`)).status).toBe(204);
      await api.request('PUT', '/v1/threads/t1/files/content?path=/notes.txt', { body: 'notes', headers: { 'content-type': 'text/plain' } });
      const session = await api.createSession({ threadId: 't1', network: { allow: ['nowhere.test'] } });
      sessions[api.tenantId] = session.id;
      const run = await api.execute(
        session.id,
        `import os, urllib.request\nopen("/session/artifacts/shared.txt", "w").write("same bytes")\nopen("/session/artifacts/own.txt", "w").write("${api.tenantId}")\n` +
          `try:\n    urllib.request.urlopen("http://elsewhere.test/", timeout=10)\nexcept Exception as e:\n    print(e)`,
      );
      expect(run.body.status).toBe('ok');
      expect(run.body.stdout).toContain('403');
      const logged = async () => (await db.query('SELECT count(*)::int AS n FROM egress_connections WHERE tenant_id = $1', [api.tenantId]))[0].n > 0;
      await until(logged);
      const batch = await api.post('/v1/batches', { items: [{ code: `open("/session/artifacts/b.txt", "w").write("b ${api.tenantId}")` }] });
      await until(async () => (await api.get(`/v1/batches/${batch.body.id}`)).body.status === 'completed');
      expect((await api.post('/v1/agents', { name: 'Helper', instructions: 'Help.', model: 'default', tools: ['read_file'] })).status).toBe(201);
      const thread = await api.post('/threads', {});
      const ran = await api.post(`/threads/${thread.body.thread_id}/runs/wait`, { assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'hi' }] } });
      expect(ran.status).toBe(200);
      // A template, built: its rows, and its image in the registry.
      expect((await api.post('/v1/templates', { name: 'own', dockerfile: `FROM drydock\nRUN echo ${api.tenantId} > /etc/owner\n` })).status).toBe(202);
      await until(async () => (await api.get('/v1/templates/own')).body.versions[0].status !== 'building', 120_000);
      expect((await api.get('/v1/templates/own')).body.versions[0].status).toBe('ready');
    }
    const repositoryOf = async (tenantId: string) =>
      `drydock-templates/${((await db.query(`SELECT id FROM templates WHERE tenant_id = $1`, [tenantId])) as { id: string }[])[0]!.id}`;
    const [doomedRepository, keptRepository] = [await repositoryOf(doomed.tenantId), await repositoryOf(kept.tenantId)];
    const registryTags = async (repository: string) =>
      (((await (await fetch(`http://${process.env.TEMPLATE_REGISTRY}/v2/${repository}/tags/list`)).json()) as { tags?: string[] | null }).tags ?? []) as string[];
    const doomedContainer = await containerOf(sessions[doomed.tenantId]!);
    const before = await rowsOf(doomed.tenantId);
    const keptBefore = await rowsOf(kept.tenantId);
    // Every table holds something of the doomed tenant, so "zero after" means something.
    for (const [table, n] of Object.entries(before)) expect([table, n > 0]).toEqual([table, true]);
    const doomedBlobs = await blobFiles(doomed.tenantId);
    const keptBlobs = await blobFiles(kept.tenantId);
    expect(doomedBlobs.every((b) => b.onDisk) && keptBlobs.every((b) => b.onDisk)).toBe(true);
    const shared = doomedBlobs.filter((b) => keptBlobs.some((k) => k.sha256 === b.sha256)).map((b) => b.sha256);
    expect(shared).toHaveLength(1);

    const removed = await platform.admin.delete(`/admin/tenants/${doomed.tenantId}`);
    expect(removed.status).toBe(200);
    expect(removed.body).toMatchObject({ id: doomed.tenantId, deleted: true, sessionsEnded: 1 });
    expect(removed.body.checkpointsDeleted).toBeGreaterThan(0);

    const after = await rowsOf(doomed.tenantId);
    expect(after).toEqual(Object.fromEntries(Object.keys(before).map((t) => [t, 0])));
    expect(await rowsOf(kept.tenantId)).toEqual(keptBefore);
    // Blobs only the doomed tenant referenced are gone; the shared one stays.
    for (const blob of doomedBlobs) expect([blob.sha256, existsSync(blobPath(blob.sha256))]).toEqual([blob.sha256, shared.includes(blob.sha256)]);
    expect((await blobFiles(kept.tenantId)).every((b) => b.onDisk)).toBe(true);
    await until(async () => !(await containerExists(doomedContainer)));
    expect(await containerExists(await containerOf(sessions[kept.tenantId]!))).toBe(true);
    // Its key is gone with it; the other tenant works as before.
    expect((await doomed.get('/v1/sessions')).status).toBe(401);
    expect((await kept.execute(sessions[kept.tenantId]!, 'print(2)')).body).toMatchObject({ status: 'ok', stdout: '2\n' });
    expect((await platform.admin.delete(`/admin/tenants/${doomed.tenantId}`)).status).toBe(404);
    // Its agent thread left this gateway's memory with it (the checkpoint cache); the
    // other tenant's is still there.
    const runtime = platform.gateway.get<AgentRuntime>(AGENT_RUNTIME);
    expect(runtime.forgetTenant(doomed.tenantId)).toBe(0);
    expect(runtime.forgetTenant(kept.tenantId)).toBe(1);
    // Its template's image leaves the registry at the next maintenance pass; the other's stays.
    expect(await registryTags(doomedRepository)).toEqual(['1']);
    await platform.worker.get(TemplateMaintenance).run();
    expect(await registryTags(doomedRepository)).toEqual([]);
    expect(await registryTags(keptRepository)).toEqual(['1']);
  }, 300_000);

  it('should kill the running items of a batch its tenant had cancelled without kill', async () => {
    const api = await platform.newTenant();
    // A program with a name of its own, found in the item's container by `docker top`
    // (the sandbox may come from the warm pool, whose labels name no tenant).
    const batch = await api.post('/v1/batches', { items: [{ code: 'import subprocess\nsubprocess.run(["sleep", "151"])' }] });
    expect(batch.status).toBe(202);
    const sleeping = async () => {
      let found = 0;
      for (const info of await platform.docker.listContainers({ filters: { label: [`drydock.worker=${platform.workerId}`] } })) {
        // A container that stopped meanwhile has no processes.
        const processes: string[][] = (await platform.docker.getContainer(info.Id).top().catch(() => null))?.Processes ?? [];
        if (processes.some((row) => row.join(' ').includes('sleep 151'))) found++;
      }
      return found;
    };
    await until(async () => (await sleeping()) === 1);
    // Cancelled by its tenant, running items left to finish: it is `cancelling`.
    expect((await api.post(`/v1/batches/${batch.body.id}/cancel`, {})).body.status).toBe('cancelling');
    expect((await platform.admin.delete(`/admin/tenants/${api.tenantId}`)).status).toBe(200);
    // Killed at once, not when the item would have ended (151 s).
    await until(async () => (await sleeping()) === 0, 20_000);
  });

  it('should keep nothing of a run that was under way while its tenant was deleted', async () => {
    const api = await platform.newTenant();
    const thread = (await api.post('/threads', {})).body.thread_id as string;
    const checkpointRows = async () => {
      const counts: Record<string, number> = {};
      for (const table of ['checkpoints', 'checkpoint_blobs', 'checkpoint_writes']) {
        counts[table] = (
          await db.query(`SELECT count(*)::int AS n FROM langgraph.${table} WHERE left(thread_id, length($1)) = $1`, [`${api.tenantId}:`])
        )[0].n;
      }
      return counts;
    };
    const input = { assistant_id: 'agent', input: { messages: [{ role: 'user', content: 'hi' }] } };
    expect((await api.post(`/threads/${thread}/runs/wait`, input)).status).toBe(200);
    expect((await checkpointRows()).checkpoints).toBeGreaterThan(0);

    // The second run waits in its model call while the tenant is deleted. Its next
    // heartbeat (THREAD_HEARTBEAT_MS) finds the thread gone and stops it, the model call
    // still unanswered: it calls nothing more.
    let release!: () => void;
    const reached = new Promise<void>((resolve) => (hold = { reached: resolve, released: new Promise<void>((r) => (release = r)) }));
    const run = api.post(`/threads/${thread}/runs/wait`, input);
    try {
      await reached;
      const callsBefore = modelCalls;
      const removed = await platform.admin.delete(`/admin/tenants/${api.tenantId}`);
      expect(removed.status).toBe(200);
      const answered = await run;

      // Its state was not kept, and it says so (503, or in the body once runs/wait's
      // keep-alive sent its 200 headers: it also waits 10 s); nothing of the tenant is left.
      const refused = answered.status === 503 ? answered.body.error : { code: answered.body.__error__?.error, message: answered.body.__error__?.message };
      expect(refused).toEqual({ code: 'RUN_NOT_CONFIRMED', message: expect.stringMatching(/^The run lost its thread/) });
      release();
      await new Promise((resolve) => setTimeout(resolve, 200));
      expect(modelCalls).toBe(callsBefore);
      expect(await checkpointRows()).toEqual({ checkpoints: 0, checkpoint_blobs: 0, checkpoint_writes: 0 });
      expect((await db.query('SELECT count(*)::int AS n FROM agent_threads WHERE tenant_id = $1', [api.tenantId]))[0].n).toBe(0);
    } finally {
      release();
      await run;
    }
  });
});
