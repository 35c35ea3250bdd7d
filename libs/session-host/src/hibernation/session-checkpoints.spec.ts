import { readdir, readFile, writeFile } from 'node:fs/promises';
import { join } from 'node:path';
import { executeJob, fakeSessions, hostWithFakes, sessionSpec } from '../session-host.spec-helper.js';
import { SessionCheckpoints } from './session-checkpoints.js';

// Hibernation on the worker with a runtime whose checkpoints are files naming their
// sandbox: what is stored, what the next run is told, what a bad checkpoint leads to.
// The real gVisor path is test/e2e/hibernate.e2e-spec.ts.
const gvisor = sessionSpec({ tier: 'gvisor' });

function host(env: Record<string, string> = {}) {
  const sessions = fakeSessions([{ id: 'ses_1', tier: 'gvisor' }]);
  const fakes = hostWithFakes({ sessions, env });
  fakes.runtime.checkpointing = true;
  return fakes;
}

async function blobFiles(root: string): Promise<string[]> {
  const entries = await readdir(join(root, 'blobs'), { recursive: true, withFileTypes: true }).catch(() => []);
  return entries.filter((e) => e.isFile()).map((e) => join(e.parentPath, e.name));
}

describe(SessionCheckpoints.name, () => {
  it('should store a hibernated session and resume its sandbox from that checkpoint on the next run', async () => {
    const { lifecycle, runner, runtime, sessions } = host();
    await runner.execute(executeJob('exe_1', { tier: 'gvisor' }));
    await lifecycle.hibernate(gvisor);
    expect(runtime.created[0]!.alive).toBe(false);
    const row = sessions.rows.get('ses_1')!;
    expect(row.status).toBe('hibernated');
    expect(sessions.checkpoints.get(row.hibernationId!)).toMatchObject({ kind: 'hibernation', tenantId: 'ten_1', tier: 'gvisor' });

    const view = await runner.execute(executeJob('exe_2', { tier: 'gvisor' }));
    expect(runtime.restored).toEqual(['checkpoint of c1']);
    expect(view.stateLost).toBe(false);
    expect(typeof view.resumedMs).toBe('number');
    // Resumed: the session is ready on its new container and its hibernation is gone.
    expect(row).toMatchObject({ status: 'ready', containerId: 'c2', hibernationId: null });
    // Told once: the run after it did not resume anything.
    expect((await runner.execute(executeJob('exe_3', { tier: 'gvisor' }))).resumedMs).toBeUndefined();
  });

  it('should refuse a session its runtime cannot checkpoint with CHECKPOINT_NOT_AVAILABLE and leave it running', async () => {
    const { lifecycle, runner, runtime } = host();
    const runc = sessionSpec();
    await runner.execute(executeJob('exe_1'));
    await expect(lifecycle.hibernate(runc)).rejects.toMatchObject({ code: 'CHECKPOINT_NOT_AVAILABLE', status: 422 });
    expect(runtime.created[0]!.alive).toBe(true);
  });

  it('should resume on the worker that hibernated it from its own copy, without the blob', async () => {
    const { lifecycle, runner, runtime, blobs } = host();
    await runner.execute(executeJob('exe_1', { tier: 'gvisor' }));
    await lifecycle.hibernate(gvisor);
    for (const stored of await blobFiles((blobs as unknown as { root: string }).root)) await writeFile(stored, 'not the checkpoint');
    expect((await runner.execute(executeJob('exe_2', { tier: 'gvisor' }))).stateLost).toBe(false);
    expect(runtime.restored).toEqual(['checkpoint of c1']);
  });

  it('should start afresh, telling the run its state is lost, when the stored checkpoint was altered', async () => {
    const { lifecycle, runner, runtime, blobs, checkpoints } = host();
    await runner.execute(executeJob('exe_1', { tier: 'gvisor' }));
    await lifecycle.hibernate(gvisor);
    // As on another worker: no local copy, the blob store's bytes only.
    await checkpoints.sweepLocal();
    const [stored] = await blobFiles((blobs as unknown as { root: string }).root);
    await writeFile(stored!, Buffer.concat([await readFile(stored!), Buffer.from('tampered')]));
    const view = await runner.execute(executeJob('exe_2', { tier: 'gvisor' }));
    expect(runtime.restored).toEqual([]);
    expect([view.status, view.stateLost]).toEqual(['ok', true]);
    expect(view.stateLostReason).toMatch(/^The session's checkpoint could not be restored \(checkpoint ckp_\w+ could not be read: .+\); it starts afresh\.$/);
  });

  it("should not restore another tenant's checkpoint into a session", async () => {
    const { lifecycle, runner, runtime, sessions } = host();
    await runner.execute(executeJob('exe_1', { tier: 'gvisor' }));
    await lifecycle.hibernate(gvisor);
    const checkpoint = sessions.checkpoints.get(sessions.rows.get('ses_1')!.hibernationId!)!;
    checkpoint.tenantId = 'ten_other';
    const view = await runner.execute(executeJob('exe_2', { tier: 'gvisor' }));
    expect(runtime.restored).toEqual([]);
    expect(view.stateLost).toBe(true);
  });

  it('should hibernate idle gvisor sessions after SESSION_HIBERNATE_AFTER_MS, and end them after their retention', async () => {
    const { reaper, runner, runtime, sessions } = host({ SESSION_HIBERNATE_AFTER_MS: '60000', SESSION_HIBERNATED_RETENTION_MS: '3600000' });
    await runner.execute(executeJob('exe_1', { tier: 'gvisor' }));
    expect(await reaper.reap(Date.now() + 30_000)).toEqual({ ended: [], hibernated: [] });
    expect(await reaper.reap(Date.now() + 61_000)).toEqual({ ended: [], hibernated: ['ses_1'] });
    expect(runtime.created[0]!.alive).toBe(false);
    expect(sessions.rows.get('ses_1')!.status).toBe('hibernated');
    sessions.rows.get('ses_1')!.lastUsedAt = new Date(Date.now() - 3_700_000);
    expect((await reaper.reap()).ended).toEqual(['ses_1']);
  });

  it('should end idle sessions instead with SESSION_IDLE_ACTION=end', async () => {
    const { reaper, runner } = host({ SESSION_IDLE_ACTION: 'end', SESSION_IDLE_TIMEOUT_MS: '60000' });
    await runner.execute(executeJob('exe_1', { tier: 'gvisor' }));
    expect(await reaper.reap(Date.now() + 61_000)).toEqual({ ended: ['ses_1'], hibernated: [] });
  });
});
