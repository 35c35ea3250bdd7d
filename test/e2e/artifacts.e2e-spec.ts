import { createHash, randomUUID } from 'node:crypto';
import { existsSync } from 'node:fs';
import { mkdir, rm, utimes, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Queue } from 'bullmq';
import { redisOptions } from '@drydock/core';
import { STAGING_ABANDONED_AFTER_MS } from '@drydock/artifacts';
import { MAINTENANCE_QUEUE, MaintenanceJob } from '@drydock/execution';
import { nextRunOf } from '../../apps/worker/src/registry/maintenance-schedule.js';
import { startPlatform, type Platform } from './support/platform.js';
import type { ApiClient } from './support/api-client.js';

const MAX_ARTIFACT_BYTES = 2 * 1024 * 1024;

// Artifacts end to end: code in a real container writes /session/artifacts/, the
// worker ingests over the host channel (fs-read) into the blob store and PostgreSQL, the
// gateway serves them with the tenant key or a signed link.
describe('Artifacts', () => {
  let platform: Platform;
  let api: ApiClient & { tenantId: string };
  let other: ApiClient & { tenantId: string };
  const artifactsRoot = () => resolve(process.env.ARTIFACTS_DIR ?? 'var/test-artifacts');
  const blobPath = (sha: string) => join(artifactsRoot(), 'blobs', sha.slice(0, 2), sha.slice(2, 4), sha);

  beforeAll(async () => {
    // The retention job runs every half second here so that expiry can be watched.
    platform = await startPlatform({ ARTIFACTS_MAX_FILE_BYTES: String(MAX_ARTIFACT_BYTES), ARTIFACTS_EXPIRY_INTERVAL_MS: '500' });
    api = await platform.newTenant();
    other = await platform.newTenant();
  });

  afterAll(async () => {
    await platform?.close();
  });

  // What the maintenance queue looks like, for a failure to say why the job did not run.
  const maintenanceState = async () => {
    const queue = new Queue(MAINTENANCE_QUEUE, { connection: redisOptions(process.env.REDIS_URL!, 'test-maintenance') });
    try {
      const { scheduler, state: next } = await nextRunOf(queue, MaintenanceJob.ExpireArtifacts);
      const failed = (await queue.getFailed(0, 2)).map((job) => `${job.name}: ${job.failedReason}`);
      const workers = (await queue.getWorkers()).length;
      return JSON.stringify({ scheduler, next, counts: await queue.getJobCounts(), failed, workers });
    } finally {
      await queue.close();
    }
  };
  const key = (client: ApiClient) => (client as unknown as { key: string }).key;
  const download = (path: string, headers: Record<string, string> = {}) => fetch(`${platform.url}${path}`, { headers });
  const run = async (client: ApiClient, sessionId: string, code: string) => {
    const res = await client.execute(sessionId, code);
    expect(res.status).toBe(200);
    return res.body;
  };

  it('should turn a matplotlib PNG into an artifact with its type, size and hash, and serve the same bytes', async () => {
    const session = await api.createSession({ threadId: 'art-plot' });
    const result = await run(
      api,
      session.id,
      [
        'import os, hashlib, matplotlib.pyplot as plt',
        "os.makedirs('/session/artifacts', exist_ok=True)",
        'plt.plot([1, 2, 3], [1, 4, 9])',
        "plt.savefig('/session/artifacts/plot.png')",
        'plt.close()',
        "data = open('/session/artifacts/plot.png', 'rb').read()",
        '(len(data), hashlib.sha256(data).hexdigest())',
      ].join('\n'),
    );
    expect(result.status).toBe('ok');
    const [size, sha] = JSON.parse(result.result.text.replace(/^\(/, '[').replace(/\)$/, ']').replaceAll("'", '"'));
    expect(result.artifacts).toHaveLength(1);
    const artifact = result.artifacts[0];
    expect(artifact).toMatchObject({ name: 'plot.png', path: '/artifacts/plot.png', mime: 'image/png', size, sha256: sha });
    expect(artifact).toMatchObject({ threadId: 'art-plot', sessionId: session.id, executionId: result.id });

    const res = await download(`/v1/artifacts/${artifact.id}/content`, { authorization: `Bearer ${key(api)}` });
    expect(res.status).toBe(200);
    expect(res.headers.get('content-type')).toBe('image/png');
    expect(res.headers.get('content-length')).toBe(String(size));
    expect(res.headers.get('content-disposition')).toContain('plot.png');
    const bytes = Buffer.from(await res.arrayBuffer());
    expect(createHash('sha256').update(bytes).digest('hex')).toBe(sha);

    const ranged = await download(`/v1/artifacts/${artifact.id}/content`, {
      authorization: `Bearer ${key(api)}`,
      range: 'bytes=1-3',
    });
    expect(ranged.status).toBe(206);
    expect(ranged.headers.get('content-range')).toBe(`bytes 1-3/${size}`);
    expect(Buffer.from(await ranged.arrayBuffer()).toString('latin1')).toBe('PNG');

    // Ingested files leave the outbox.
    expect((await run(api, session.id, "os.listdir('/session/artifacts')")).result.text).toBe('[]');
    expect((await api.get('/v1/artifacts?threadId=art-plot')).body.artifacts.map((a: { id: string }) => a.id)).toEqual([
      artifact.id,
    ]);
  });

  it("should name a download \"plot (1).png\" in a filename* that strict RFC 8187 parsers read, on both download routes", async () => {
    const session = await api.createSession({ threadId: 'art-disposition' });
    const write = "import os\nos.makedirs('/session/artifacts', exist_ok=True)\nopen('/session/artifacts/plot (1).png', 'wb').write(b'x')";
    const [artifact] = (await run(api, session.id, write)).artifacts;
    expect(artifact).toMatchObject({ name: 'plot (1).png' });
    // encodeURIComponent leaves ' ( ) * as they are; RFC 8187's attr-char does not allow them.
    const expected = `attachment; filename="plot (1).png"; filename*=UTF-8''plot%20%281%29.png`;
    const direct = await download(`/v1/artifacts/${artifact.id}/content`, { authorization: `Bearer ${key(api)}` });
    expect(direct.headers.get('content-disposition')).toBe(expected);
    const { url } = (await api.post(`/v1/artifacts/${artifact.id}/url`, {})).body as { url: string };
    const signed = await download(url);
    expect(signed.status).toBe(200);
    expect(signed.headers.get('content-disposition')).toBe(expected);
  });

  it('should store the same bytes once for two artifacts and collect them only when both are deleted', async () => {
    const session = await api.createSession({ threadId: 'art-dedup' });
    // Bytes no other run ever stored: the test database outlives a run, and a blob some
    // earlier run's tenant still references is rightly kept.
    const content = `identical content ${Date.now()} ${Math.random()}`;
    const write = `import os\nos.makedirs('/session/artifacts', exist_ok=True)\nopen('/session/artifacts/same.txt', 'w').write(${JSON.stringify(content)})`;
    const first = (await run(api, session.id, write)).artifacts[0];
    const second = (await run(api, session.id, write)).artifacts[0];
    expect(first.id).not.toBe(second.id);
    expect(first.sha256).toBe(second.sha256);
    expect(existsSync(blobPath(first.sha256))).toBe(true);

    expect((await api.delete(`/v1/artifacts/${first.id}`)).status).toBe(204);
    expect(existsSync(blobPath(first.sha256))).toBe(true);
    const stillThere = await download(`/v1/artifacts/${second.id}/content`, { authorization: `Bearer ${key(api)}` });
    expect(await stillThere.text()).toBe(content);

    expect((await api.delete(`/v1/artifacts/${second.id}`)).status).toBe(204);
    expect(existsSync(blobPath(first.sha256))).toBe(false);
    expect((await api.get(`/v1/artifacts/${second.id}`)).status).toBe(404);
  });

  it('should refuse symlinks, hard links and FIFOs in the artifacts folder and store nothing of /etc/passwd', async () => {
    const session = await api.createSession({ threadId: 'art-links' });
    const result = await run(
      api,
      session.id,
      [
        'import os',
        "os.makedirs('/session/artifacts', exist_ok=True)",
        "os.symlink('/etc/passwd', '/session/artifacts/passwd')",
        "os.symlink('/etc/shadow', '/session/artifacts/shadow.txt')",
        "open('/session/scratch.txt', 'w').write('x')",
        "os.link('/session/scratch.txt', '/session/artifacts/linked.txt')",
        "os.mkfifo('/session/artifacts/pipe')",
      ].join('\n'),
    );
    expect(result.status).toBe('ok');
    expect(result.artifacts).toEqual([]);
    expect(result.artifactsSkipped).toEqual([
      { path: '/artifacts/linked.txt', reason: 'hardlink' },
      { path: '/artifacts/passwd', reason: 'symlink' },
      { path: '/artifacts/pipe', reason: 'fifo' },
      { path: '/artifacts/shadow.txt', reason: 'symlink' },
    ]);
    expect((await api.get('/v1/artifacts?threadId=art-links')).body.artifacts).toEqual([]);
    // The refused entries were removed, and the session still answers.
    expect((await run(api, session.id, "sorted(os.listdir('/session/artifacts'))")).result.text).toBe('[]');
  });

  it('should never take /etc/passwd through an artifact swapped for a symlink while it is read', async () => {
    // A background thread keeps replacing the file with a symlink and back, so the listing
    // and the read (fs-read, decision 013) see either at any moment: whatever is taken
    // must be the regular file's bytes.
    const session = await api.createSession({ threadId: 'art-swap' });
    const start = await run(
      api,
      session.id,
      [
        'import os, threading',
        "os.makedirs('/session/artifacts', exist_ok=True)",
        'stop = False',
        'def swap():',
        '    while not stop:',
        "        open('/session/swap.tmp', 'w').write('SAFE\\n')",
        "        os.replace('/session/swap.tmp', '/session/artifacts/swap.txt')",
        "        try: os.remove('/session/link.tmp')",
        '        except FileNotFoundError: pass',
        "        os.symlink('/etc/passwd', '/session/link.tmp')",
        "        os.replace('/session/link.tmp', '/session/artifacts/swap.txt')",
        't = threading.Thread(target=swap, daemon=True)',
        't.start()',
      ].join('\n'),
    );
    expect(start.status).toBe('ok');
    const taken: string[] = [];
    const reasons = new Set<string>();
    for (let i = 0; i < 15; i++) {
      const result = await run(api, session.id, 'import time\ntime.sleep(0.01)');
      for (const artifact of result.artifacts as { id: string }[]) {
        const res = await download(`/v1/artifacts/${artifact.id}/content`, { authorization: `Bearer ${key(api)}` });
        taken.push(await res.text());
      }
      for (const { reason } of result.artifactsSkipped as { reason: string }[]) reasons.add(reason);
    }
    await run(api, session.id, 'stop = True\nt.join()');
    expect(taken.length + reasons.size).toBeGreaterThan(0);
    expect(new Set(taken)).toEqual(new Set(taken.length > 0 ? ['SAFE\n'] : []));
    expect([...reasons].filter((r) => !['symlink', 'vanished'].includes(r))).toEqual([]);
  });

  it('should take the other artifacts while code in the background is still writing one, and leave that one in the folder', async () => {
    const session = await api.createSession({ threadId: 'art-hot' });
    // A thread that keeps appending to artifacts/hot.log (starting over past 768 KiB),
    // opening it each time, so a taken and removed file comes back. A read of it usually
    // sees it grow or shrink, not always: runs that also leave calm.txt go on until one
    // finds hot.log changing under its read.
    const started = await run(
      api,
      session.id,
      [
        'import os, threading',
        "os.makedirs('/session/artifacts', exist_ok=True)",
        'stop = threading.Event()',
        'def churn():',
        '    while not stop.is_set():',
        "        with open('/session/artifacts/hot.log', 'ab', buffering=0) as f:",
        '            for _ in range(64):',
        "                f.write(b'x' * 256)",
        '                if f.tell() > 768 * 1024: f.truncate(0)',
        'writer = threading.Thread(target=churn, daemon=True)',
        'writer.start()',
      ].join('\n'),
    );
    expect(started.status).toBe('ok');
    let caught: { artifacts: { name: string }[]; artifactsSkipped: { path: string; reason: string }[] } | undefined;
    for (let attempt = 1; attempt <= 30 && !caught; attempt++) {
      const result = await run(api, session.id, `open('/session/artifacts/calm.txt', 'w').write('calm ${attempt}')`);
      expect(result.status).toBe('ok');
      if (result.artifactsSkipped.length > 0) caught = result;
    }
    expect(caught).toBeDefined();
    expect(caught!.artifacts.map((a) => a.name)).toEqual(['calm.txt']);
    expect(caught!.artifactsSkipped).toEqual([{ path: '/artifacts/hot.log', reason: 'changing' }]);

    const stopped = await run(api, session.id, "stop.set(); writer.join()\nsorted(os.listdir('/session/artifacts'))");
    expect(stopped.status).toBe('ok');
    // Left in the folder while it changed; taken by the run after the writer stopped.
    expect(stopped.artifacts.map((a: { name: string }) => a.name)).toEqual(['hot.log']);
    expect((await run(api, session.id, "sorted(os.listdir('/session/artifacts'))")).result.text).toBe('[]');
  });

  it('should refuse a file over the size cap and keep the run', async () => {
    const session = await api.createSession({ threadId: 'art-big' });
    const result = await run(
      api,
      session.id,
      `import os\nos.makedirs('/session/artifacts', exist_ok=True)\nopen('/session/artifacts/big.bin', 'wb').write(b'x' * ${MAX_ARTIFACT_BYTES + 1})\nopen('/session/artifacts/ok.txt', 'w').write('ok')`,
    );
    expect(result.status).toBe('ok');
    expect(result.artifacts.map((a: { name: string }) => a.name)).toEqual(['ok.txt']);
    expect(result.artifactsSkipped).toEqual([{ path: '/artifacts/big.bin', reason: 'too-large' }]);
  });

  it('should capture an open matplotlib figure as a PNG artifact and show it in the result', async () => {
    const session = await api.createSession({ threadId: 'art-figure' });
    const result = await run(api, session.id, 'import matplotlib.pyplot as plt\nplt.plot([1, 2, 3], [3, 1, 2])\nplt.title("t")');
    expect(result.status).toBe('ok');
    expect(result.artifacts).toHaveLength(1);
    expect(result.artifacts[0]).toMatchObject({ name: 'figure-1.png', mime: 'image/png', threadId: 'art-figure' });
    // The notebook view: the figure inline in the result, the same bytes as the artifact.
    expect(typeof result.result.png).toBe('string');
    const inline = Buffer.from(result.result.png, 'base64');
    expect(createHash('sha256').update(inline).digest('hex')).toBe(result.artifacts[0].sha256);
    // Captured figures are closed: the next cell captures nothing.
    const next = await run(api, session.id, 'len(plt.get_fignums())');
    expect(next.result.text).toBe('0');
    expect(next.artifacts).toEqual([]);
  });

  describe('quotas', () => {
    it('should refuse artifacts past the tenant count quota, report them, and keep the run', async () => {
      const limited = await platform.newTenant({ artifactCount: 2 });
      const session = await limited.createSession({ threadId: 'quota-count' });
      const result = await run(
        limited,
        session.id,
        "import os\nos.makedirs('/session/artifacts', exist_ok=True)\nfor i in range(3): open(f'/session/artifacts/f{i}.txt', 'w').write(f'quota {i}')\n'done'",
      );
      expect(result.status).toBe('ok');
      expect(result.result.text).toBe("'done'");
      expect(result.artifacts).toHaveLength(2);
      expect(result.artifactsSkipped).toHaveLength(1);
      expect(result.artifactsSkipped[0].reason).toBe('quota');
      // The refused file left the outbox too, and nothing of it was stored.
      expect((await run(limited, session.id, "os.listdir('/session/artifacts')")).result.text).toBe('[]');
      expect((await limited.get('/v1/artifacts')).body.artifacts).toHaveLength(2);

      // Deleting one frees its slot.
      expect((await limited.delete(`/v1/artifacts/${result.artifacts[0].id}`)).status).toBe(204);
      const again = await run(limited, session.id, "open('/session/artifacts/again.txt', 'w').write('again')");
      expect(again.artifacts.map((a: { name: string }) => a.name)).toEqual(['again.txt']);
    });

    it('should refuse an artifact that would pass the tenant byte quota without storing it', async () => {
      const limited = await platform.newTenant({ artifactBytes: 1000 });
      const session = await limited.createSession({ threadId: 'quota-bytes' });
      const result = await run(
        limited,
        session.id,
        "import os\nos.makedirs('/session/artifacts', exist_ok=True)\nopen('/session/artifacts/small.txt', 'w').write('s' * 600)\nopen('/session/artifacts/over.txt', 'w').write('o' * 600)",
      );
      expect(result.status).toBe('ok');
      expect(result.artifacts.map((a: { size: number }) => a.size)).toEqual([600]);
      expect(result.artifactsSkipped).toEqual([
        { path: result.artifacts[0].name === 'small.txt' ? '/artifacts/over.txt' : '/artifacts/small.txt', reason: 'quota' },
      ]);
      // Another tenant's quota is its own.
      const free = await api.createSession({ threadId: 'quota-bytes' });
      const unlimited = await run(
        api,
        free.id,
        "import os\nos.makedirs('/session/artifacts', exist_ok=True)\nopen('/session/artifacts/over.txt', 'w').write('o' * 600)",
      );
      expect(unlimited.artifacts).toHaveLength(1);
    });
  });

  it('should hide artifacts past their retention at once and let the scheduled job delete them and their content', async () => {
    const shortLived = await platform.newTenant({ artifactRetentionSeconds: 1 });
    const session = await shortLived.createSession({ threadId: 'retention' });
    const unique = `retained ${Date.now()} ${Math.random()}`;
    const result = await run(
      shortLived,
      session.id,
      `import os\nos.makedirs('/session/artifacts', exist_ok=True)\nopen('/session/artifacts/r.txt', 'w').write(${JSON.stringify(unique)})`,
    );
    const artifact = result.artifacts[0];
    const expiresIn = Date.parse(artifact.expiresAt) - Date.parse(artifact.createdAt);
    expect(expiresIn).toBeGreaterThanOrEqual(900);
    expect(expiresIn).toBeLessThanOrEqual(1100);
    expect(existsSync(blobPath(artifact.sha256))).toBe(true);
    expect((await shortLived.get(`/v1/artifacts/${artifact.id}`)).status).toBe(200);

    await new Promise((r) => setTimeout(r, 1200));
    expect((await shortLived.get(`/v1/artifacts/${artifact.id}`)).status).toBe(404);
    expect((await shortLived.get('/v1/artifacts?threadId=retention')).body.artifacts).toEqual([]);
    // The repeatable BullMQ job in the worker collects the content.
    const deadline = Date.now() + 15_000;
    while (existsSync(blobPath(artifact.sha256)) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
    if (existsSync(blobPath(artifact.sha256))) throw new Error(`the content is still stored: ${await maintenanceState()}`);

    // Artifacts of tenants with the default retention are untouched by the job.
    const kept = await api.createSession({ threadId: 'retention-kept' });
    const keptResult = await run(
      api,
      kept.id,
      "import os\nos.makedirs('/session/artifacts', exist_ok=True)\nopen('/session/artifacts/k.txt', 'w').write('kept')",
    );
    expect(Date.parse(keptResult.artifacts[0].expiresAt) - Date.now()).toBeGreaterThan(24 * 3600 * 1000);
  });

  it('should let the scheduled job remove staged copies a crashed worker left, and no others', async () => {
    const staging = join(artifactsRoot(), 'staging');
    await mkdir(staging, { recursive: true });
    const abandoned = join(staging, randomUUID());
    const recent = join(staging, randomUUID());
    try {
      await writeFile(abandoned, 'a worker died between staging and commit');
      await writeFile(recent, 'an ingest of a live worker, waiting for its commit');
      const old = new Date(Date.now() - STAGING_ABANDONED_AFTER_MS - 60_000);
      await utimes(abandoned, old, old);
      const deadline = Date.now() + 15_000;
      while (existsSync(abandoned) && Date.now() < deadline) await new Promise((r) => setTimeout(r, 200));
      if (existsSync(abandoned)) throw new Error(`the abandoned copy is still staged: ${await maintenanceState()}`);
      expect(existsSync(recent)).toBe(true);
    } finally {
      await rm(abandoned, { force: true });
      await rm(recent, { force: true });
    }
  });

  describe('signed links and tenancy', () => {
    let artifactId: string;

    beforeAll(async () => {
      const session = await api.createSession({ threadId: 'art-signed' });
      const result = await run(
        api,
        session.id,
        "import os\nos.makedirs('/session/artifacts', exist_ok=True)\nopen('/session/artifacts/report.csv', 'w').write('a,b\\n1,2\\n')",
      );
      artifactId = result.artifacts[0].id;
    });

    const sign = async (ttlSeconds?: number) => {
      const res = await api.post(`/v1/artifacts/${artifactId}/url`, ttlSeconds === undefined ? {} : { ttlSeconds });
      expect(res.status).toBe(201);
      return res.body as { url: string; expiresAt: string };
    };

    it('should download through a valid signed link without the API key', async () => {
      const { url, expiresAt } = await sign(60);
      expect(new Date(expiresAt).getTime()).toBeGreaterThan(Date.now());
      const res = await download(url);
      expect(res.status).toBe(200);
      expect(res.headers.get('content-type')).toContain('text/csv');
      expect(await res.text()).toBe('a,b\n1,2\n');
    });

    it('should refuse every tampered, truncated or expired link with 403, never 500', async () => {
      const { url } = await sign(60);
      const parsed = new URL(url, platform.url);
      const variant = (edit: (u: URL) => void) => {
        const u = new URL(parsed);
        edit(u);
        return u.pathname + u.search;
      };
      const sig = parsed.searchParams.get('signature')!;
      const attempts = [
        // Another id: its last character changed (to one it is not already).
        variant((u) => (u.pathname = u.pathname.replace(artifactId, `${artifactId.slice(0, -1)}${artifactId.endsWith('x') ? 'y' : 'x'}`))),
        variant((u) => u.searchParams.set('tenant', other.tenantId)),
        variant((u) => u.searchParams.set('expires', String(Number(u.searchParams.get('expires')) + 1))),
        variant((u) => u.searchParams.set('signature', `${sig.slice(0, -1)}${sig.endsWith('A') ? 'B' : 'A'}`)),
        variant((u) => u.searchParams.set('signature', sig.slice(0, 20))),
        variant((u) => u.searchParams.delete('signature')),
        variant((u) => u.searchParams.set('expires', '1')),
      ];
      for (const attempt of attempts) {
        const res = await download(attempt);
        expect([attempt, res.status]).toEqual([attempt, 403]);
      }
    });

    it('should refuse a TTL above the maximum', async () => {
      const res = await api.post(`/v1/artifacts/${artifactId}/url`, { ttlSeconds: 10 * 365 * 24 * 3600 });
      expect(res.status).toBe(400);
      expect(res.body.error.code).toBe('TTL_OUT_OF_RANGE');
    });

    it("should keep another tenant from reading, listing or signing the artifact", async () => {
      expect((await other.get(`/v1/artifacts/${artifactId}`)).status).toBe(404);
      const res = await download(`/v1/artifacts/${artifactId}/content`, { authorization: `Bearer ${key(other)}` });
      expect(res.status).toBe(404);
      expect((await other.get('/v1/artifacts?threadId=art-signed')).body.artifacts).toEqual([]);
      expect((await other.post(`/v1/artifacts/${artifactId}/url`, {})).status).toBe(404);
      expect((await other.delete(`/v1/artifacts/${artifactId}`)).status).toBe(404);
    });
  });
});
