import { jest } from '@jest/globals';
import { createHash, randomBytes } from 'node:crypto';
import { existsSync, readdirSync } from 'node:fs';
import { mkdir, utimes, writeFile } from 'node:fs/promises';
import { join, resolve } from 'node:path';
import { Readable } from 'node:stream';
import { DataSource } from 'typeorm';
import { ArtifactsService, BLOB_STORE, STAGING_ABANDONED_AFTER_MS, type ArtifactLineage, type BlobStore } from '@drydock/artifacts';
import { SandboxFileChangedError } from '@drydock/execution';
import { ArtifactIngester } from '@drydock/session-host';
import { FakeSandbox, okOutcome } from '../fakes/fake-sandbox.js';
import { startPlatform, type Platform } from './support/platform.js';

const MAX_FILE_BYTES = 4 * 1024 * 1024;

// The worker's ingestion of many small files, recorded in groups (one transaction per
// group), against the real PostgreSQL and blob store. The sandbox is a fake whose
// /session is a Map, so that the files, their order and failures are the test's.
describe('Artifacts in groups', () => {
  let platform: Platform;
  let sut: ArtifactIngester;
  let artifacts: ArtifactsService;
  let blobs: BlobStore;
  let db: DataSource;
  const root = () => resolve(process.env.ARTIFACTS_DIR ?? 'var/test-artifacts');
  const blobPath = (sha: string) => join(root(), 'blobs', sha.slice(0, 2), sha.slice(2, 4), sha);
  const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');
  const staged = () => (existsSync(join(root(), 'staging')) ? readdirSync(join(root(), 'staging')) : []);
  const unique = (size: number) => Buffer.concat([Buffer.from(`${randomBytes(16).toString('hex')}\n`), Buffer.alloc(size, 'x')]).subarray(0, size);

  beforeAll(async () => {
    platform = await startPlatform({ ARTIFACTS_MAX_FILE_BYTES: String(MAX_FILE_BYTES) });
    sut = platform.worker.get(ArtifactIngester);
    artifacts = platform.worker.get(ArtifactsService);
    blobs = platform.worker.get(BLOB_STORE);
    db = platform.gateway.get(DataSource);
  });

  afterAll(async () => {
    await platform?.close();
  });

  // A sandbox holding `files` in /session/artifacts, and the listing a run would report.
  const sandboxWith = (files: [string, Buffer][]) => {
    const sandbox = new FakeSandbox(`c-${randomBytes(3).toString('hex')}`, async () => okOutcome());
    for (const [name, content] of files) sandbox.session.set(`/artifacts/${name}`, content);
    const listing = { files: files.map(([name, content]) => ({ path: `/artifacts/${name}`, size: content.length })), skipped: [] };
    return { sandbox, listing };
  };
  const lineageOf = (threadId: string): ArtifactLineage => ({ threadId, sessionId: null, executionId: null });
  // Five files for a tenant with room for 3 artifacts and 1,000 bytes: b and e do not fit.
  const QUOTA = { artifactCount: 3, artifactBytes: 1000 };
  const pastQuota = (): [string, Buffer][] => [
    ['a.bin', unique(400)],
    ['b.bin', unique(700)], // 1,100 bytes: past the byte quota
    ['c.bin', unique(300)],
    ['d.bin', unique(200)],
    ['e.bin', unique(10)], // a fourth artifact: past the count quota
  ];

  it('should store many small files in one pass with their content, type, order and lineage, and empty the outbox', async () => {
    const tenant = await platform.newTenant();
    const files: [string, Buffer][] = Array.from({ length: 250 }, (_, i) => [`s${String(i).padStart(3, '0')}.txt`, unique(1024)]);
    const { sandbox, listing } = sandboxWith(files);

    const result = await sut.ingest(sandbox, tenant.tenantId, lineageOf('grouped'), listing);

    expect(result.skipped).toEqual([]);
    expect(result.artifacts.map((a) => a.name)).toEqual(files.map(([name]) => name));
    for (const [index, artifact] of result.artifacts.entries()) {
      expect(artifact).toMatchObject({ size: 1024, sha256: sha256(files[index]![1]), threadId: 'grouped' });
      expect(artifact.mime).toMatch(/^text\/plain/);
    }
    expect(await artifacts.readText(tenant.tenantId, result.artifacts[137]!.id)).toBe(files[137]![1].toString());
    // Newest first, as when each file had its own transaction.
    const listed = await artifacts.list(tenant.tenantId, { threadId: 'grouped', limit: 1000 });
    expect(listed.map((a) => a.name)).toEqual(files.map(([name]) => name).reverse());
    expect(await artifacts.usage(tenant.tenantId)).toEqual({ count: 250, bytes: 250 * 1024 });
    expect(sandbox.session.size).toBe(0);
    expect(staged()).toEqual([]);
  });

  it('should refuse files past the count or byte quota in the middle of a group and store the ones around them', async () => {
    const tenant = await platform.newTenant(QUOTA);
    const files = pastQuota();
    const { sandbox, listing } = sandboxWith(files);
    // The ingester's estimate is read before the run; the check under the lock decides.
    // Make the estimate blind to the quota so that the store's check is what refuses.
    const usage = jest.spyOn(artifacts, 'usage').mockResolvedValueOnce({ count: -100, bytes: -100_000 });

    const result = await sut.ingest(sandbox, tenant.tenantId, lineageOf('quota'), listing);
    usage.mockRestore();

    expect(result.artifacts.map((a) => a.name)).toEqual(['a.bin', 'c.bin', 'd.bin']);
    expect(result.skipped).toEqual([
      { path: '/artifacts/b.bin', reason: 'quota' },
      { path: '/artifacts/e.bin', reason: 'quota' },
    ]);
    expect(await artifacts.usage(tenant.tenantId)).toEqual({ count: 3, bytes: 900 });
    // Nothing of the refused files was kept, and they left the outbox with the others.
    expect(existsSync(blobPath(sha256(files[1]![1])))).toBe(false);
    expect(existsSync(blobPath(sha256(files[4]![1])))).toBe(false);
    expect(sandbox.session.size).toBe(0);
    expect(staged()).toEqual([]);
  });

  it('should not read the files its estimate already puts past the quota, and empty them from the outbox all the same', async () => {
    const tenant = await platform.newTenant(QUOTA);
    const files = pastQuota();
    const { sandbox, listing } = sandboxWith(files);
    const exported = jest.spyOn(sandbox, 'exportFiles');

    const result = await sut.ingest(sandbox, tenant.tenantId, lineageOf('estimate'), listing);

    expect(exported.mock.calls.map(([paths]) => paths)).toEqual([['/artifacts/a.bin', '/artifacts/c.bin', '/artifacts/d.bin']]);
    expect(result.artifacts.map((a) => a.name)).toEqual(['a.bin', 'c.bin', 'd.bin']);
    expect(result.skipped).toEqual([
      { path: '/artifacts/b.bin', reason: 'quota' },
      { path: '/artifacts/e.bin', reason: 'quota' },
    ]);
    expect(await artifacts.usage(tenant.tenantId)).toEqual({ count: 3, bytes: 900 });
    expect(sandbox.session.size).toBe(0);

    // Over the quota already: nothing is read at all.
    const full = sandboxWith([['f.bin', unique(5)]]);
    const none = jest.spyOn(full.sandbox, 'exportFiles');
    const refused = await sut.ingest(full.sandbox, tenant.tenantId, lineageOf('estimate'), full.listing);
    expect(none).not.toHaveBeenCalled();
    expect(refused).toEqual({ artifacts: [], skipped: [{ path: '/artifacts/f.bin', reason: 'quota' }] });
    expect(full.sandbox.session.size).toBe(0);
  });

  it('should keep content once within a group and against what is already stored, for every tenant', async () => {
    const tenant = await platform.newTenant();
    const other = await platform.newTenant();
    const stored = unique(2000);
    const before = await sut.ingest(...args(sandboxWith([['first.bin', stored]]), other.tenantId, 'dedup'));
    expect(before.artifacts).toHaveLength(1);
    const twice = unique(3000);
    const { sandbox, listing } = sandboxWith([
      ['again.bin', stored],
      ['one.bin', twice],
      ['two.bin', twice],
    ]);

    const result = await sut.ingest(sandbox, tenant.tenantId, lineageOf('dedup'), listing);

    expect(result.artifacts.map((a) => [a.name, a.sha256])).toEqual([
      ['again.bin', sha256(stored)],
      ['one.bin', sha256(twice)],
      ['two.bin', sha256(twice)],
    ]);
    const rows: { sha256: string }[] = await db.query(`SELECT sha256 FROM artifact_blobs WHERE sha256 = ANY($1)`, [[sha256(stored), sha256(twice)]]);
    expect(rows).toHaveLength(2);
    expect(staged()).toEqual([]);
    for (const artifact of result.artifacts) {
      expect(await artifacts.readBytes(tenant.tenantId, artifact.id)).toEqual(artifact.name === 'again.bin' ? stored : twice);
    }
    // Each row is its owner's: deleting one keeps the bytes the others point at.
    await artifacts.delete(tenant.tenantId, result.artifacts[1]!.id);
    expect(await artifacts.readBytes(tenant.tenantId, result.artifacts[2]!.id)).toEqual(twice);
    await artifacts.delete(tenant.tenantId, result.artifacts[0]!.id);
    expect(await artifacts.readBytes(other.tenantId, before.artifacts[0]!.id)).toEqual(stored);
  });

  it('should store a large file on its own between groups of small ones and refuse one over the size cap', async () => {
    const tenant = await platform.newTenant();
    const large = unique(2 * 1024 * 1024);
    const files: [string, Buffer][] = [
      ['a.txt', unique(100)],
      ['b.bin', large],
      ['c.bin', unique(MAX_FILE_BYTES + 1)],
      ['d.txt', unique(100)],
    ];
    const { sandbox, listing } = sandboxWith(files);

    const result = await sut.ingest(sandbox, tenant.tenantId, lineageOf('mixed'), listing);

    expect(result.artifacts.map((a) => a.name)).toEqual(['a.txt', 'b.bin', 'd.txt']);
    expect(result.skipped).toEqual([{ path: '/artifacts/c.bin', reason: 'too-large' }]);
    expect(sha256(await artifacts.readBytes(tenant.tenantId, result.artifacts[1]!.id))).toBe(sha256(large));
    expect(sandbox.session.size).toBe(0);
  });

  it('should take the other files when one is still being written, and leave that one in the outbox for the next run', async () => {
    const tenant = await platform.newTenant();
    const files: [string, Buffer][] = [
      ['a.txt', unique(100)],
      ['hot.log', unique(300)],
      ['big.bin', unique(2 * 1024 * 1024)],
      ['hot-big.bin', unique(2 * 1024 * 1024)],
      ['z.txt', unique(100)],
    ];
    const { sandbox, listing } = sandboxWith(files);
    sandbox.changing.add('/artifacts/hot.log');
    sandbox.changing.add('/artifacts/hot-big.bin');

    const result = await sut.ingest(sandbox, tenant.tenantId, lineageOf('changing'), listing);

    expect(result.artifacts.map((a) => a.name)).toEqual(['a.txt', 'big.bin', 'z.txt']);
    expect(result.skipped).toEqual([
      { path: '/artifacts/hot-big.bin', reason: 'changing' },
      { path: '/artifacts/hot.log', reason: 'changing' },
    ]);
    expect(await artifacts.usage(tenant.tenantId)).toEqual({ count: 3, bytes: 200 + 2 * 1024 * 1024 });
    expect(staged()).toEqual([]);
    expect([...sandbox.session.keys()].sort()).toEqual(['/artifacts/hot-big.bin', '/artifacts/hot.log']);

    // Written out by the next run: taken then.
    sandbox.changing.clear();
    const again = await sut.ingest(sandbox, tenant.tenantId, lineageOf('changing'), {
      files: ['hot.log', 'hot-big.bin'].map((name) => ({ path: `/artifacts/${name}`, size: sandbox.session.get(`/artifacts/${name}`)!.length })),
      skipped: [],
    });
    expect(again.artifacts.map((a) => a.name)).toEqual(['hot.log', 'hot-big.bin']);
    expect(sandbox.session.size).toBe(0);
  });

  it('should fail staging, with its error, content that failed or closed already or fails before the store reads it', async () => {
    // A sandbox's file that changed while it was read can fail in the same read of the
    // channel as its header: before the ingester stages it, or while staging waits.
    const failedAlready = new Readable({ read() {} });
    failedAlready.on('error', () => undefined);
    failedAlready.destroy(new SandboxFileChangedError('/artifacts/early.log'));
    await new Promise((done) => setImmediate(done));
    await expect(artifacts.stage('/artifacts/early.log', failedAlready, { expectedBytes: 10 })).rejects.toThrow(
      '/artifacts/early.log changed while it was read',
    );

    const closedAlready = new Readable({ read() {} });
    closedAlready.destroy();
    await expect(artifacts.stage('/artifacts/closed.log', closedAlready, { expectedBytes: 10 })).rejects.toThrow(
      '/artifacts/closed.log: its bytes were gone before they were read',
    );

    for (const expectedBytes of [10, undefined]) {
      const failing = new Readable({ read() {} });
      failing.on('error', () => undefined);
      const staging = artifacts.stage('/artifacts/late.log', failing, { expectedBytes });
      failing.destroy(new SandboxFileChangedError('/artifacts/late.log'));
      await expect(staging).rejects.toThrow('/artifacts/late.log changed while it was read');
    }
    expect(staged()).toEqual([]);
  });

  describe('with garbage collection', () => {
    // Content whose artifact rows are gone but whose blob row and bytes the collector has
    // not removed yet.
    const unreferenced = async () => {
      const bytes = unique(512);
      const sha = sha256(bytes);
      await db.query(`INSERT INTO artifact_blobs (sha256, size) VALUES ($1, $2)`, [sha, bytes.length]);
      await mkdir(join(blobPath(sha), '..'), { recursive: true });
      await writeFile(blobPath(sha), bytes);
      return { bytes, sha };
    };

    it('should keep the bytes of content a group is storing while a collection runs', async () => {
      const tenant = await platform.newTenant();
      const { bytes, sha } = await unreferenced();
      const commit = blobs.commit.bind(blobs);
      const collected: number[] = [];
      // The collection runs (once) while the group's transaction holds the blob rows; the
      // group's contents are committed side by side.
      let collecting = false;
      const spy = jest.spyOn(blobs, 'commit').mockImplementation(async (blob) => {
        if (!collecting) {
          collecting = true;
          collected.push(await artifacts.collectGarbage());
        }
        return commit(blob);
      });
      try {
        const result = await sut.ingest(...args(sandboxWith([['kept.bin', bytes], ['new.bin', unique(100)]]), tenant.tenantId, 'gc'));
        expect(result.artifacts).toHaveLength(2);
        expect(collected).toHaveLength(1);
        expect(existsSync(blobPath(sha))).toBe(true);
        expect(await artifacts.readBytes(tenant.tenantId, result.artifacts[0]!.id)).toEqual(bytes);
      } finally {
        spy.mockRestore();
      }
      // Referenced now: a later collection leaves it too.
      await artifacts.collectGarbage();
      expect(existsSync(blobPath(sha))).toBe(true);
    });

    it('should store the bytes again when a collection removed them first', async () => {
      const tenant = await platform.newTenant();
      const { bytes, sha } = await unreferenced();
      // A collection holds the blob row and removes the bytes; the group waits on the row.
      const qr = db.createQueryRunner();
      await qr.connect();
      await qr.startTransaction();
      let ingest: ReturnType<ArtifactIngester['ingest']> | undefined;
      try {
        await qr.query(`SELECT sha256 FROM artifact_blobs WHERE sha256 = $1 FOR UPDATE`, [sha]);
        await blobs.remove(sha);
        ingest = sut.ingest(...args(sandboxWith([['a-other.bin', unique(100)], ['b-back.bin', bytes]]), tenant.tenantId, 'gc-first'));
        await new Promise((r) => setTimeout(r, 300));
        await qr.query(`DELETE FROM artifact_blobs WHERE sha256 = $1`, [sha]);
        await qr.commitTransaction();
      } finally {
        if (qr.isTransactionActive) await qr.rollbackTransaction();
        await qr.release();
      }
      const result = await ingest!;
      expect(result.artifacts.map((a) => a.name)).toEqual(['a-other.bin', 'b-back.bin']);
      expect(existsSync(blobPath(sha))).toBe(true);
      expect(await artifacts.readBytes(tenant.tenantId, result.artifacts[1]!.id)).toEqual(bytes);
    });

    it('should store the bytes of content whose row survived a failed collection', async () => {
      // The collector removes bytes before the row; should its transaction then fail,
      // the row stays without bytes and the next ingest of that content writes them.
      const tenant = await platform.newTenant();
      const { bytes, sha } = await unreferenced();
      await blobs.remove(sha);

      const result = await sut.ingest(...args(sandboxWith([['lost.bin', bytes]]), tenant.tenantId, 'gc-failed'));

      expect(existsSync(blobPath(sha))).toBe(true);
      expect(await artifacts.readBytes(tenant.tenantId, result.artifacts[0]!.id)).toEqual(bytes);
    });
  });

  it('should record nothing of a group whose store fails and leave its files in the outbox for the next run', async () => {
    const tenant = await platform.newTenant();
    const files: [string, Buffer][] = [
      ['a.bin', unique(100)],
      ['b.bin', unique(100)],
    ];
    const { sandbox, listing } = sandboxWith(files);
    const spy = jest.spyOn(blobs, 'commit').mockRejectedValueOnce(new Error('disk full'));
    let result: Awaited<ReturnType<ArtifactIngester['ingest']>>;
    try {
      result = await sut.ingest(sandbox, tenant.tenantId, lineageOf('failing'), listing);
    } finally {
      spy.mockRestore();
    }

    expect(result.artifacts).toEqual([]);
    expect(result.skipped).toEqual([
      { path: '/artifacts/a.bin', reason: 'ingest-error' },
      { path: '/artifacts/b.bin', reason: 'ingest-error' },
    ]);
    expect(await artifacts.usage(tenant.tenantId)).toEqual({ count: 0, bytes: 0 });
    expect(await artifacts.list(tenant.tenantId, { limit: 10 })).toEqual([]);
    expect(staged()).toEqual([]);
    expect([...sandbox.session.keys()].sort()).toEqual(['/artifacts/a.bin', '/artifacts/b.bin']);

    // The next run takes them.
    const again = await sut.ingest(sandbox, tenant.tenantId, lineageOf('failing'), listing);
    expect(again.artifacts.map((a) => a.name)).toEqual(['a.bin', 'b.bin']);
  });

  it('should let the retention job remove the bytes a failed group committed, and keep recorded and recent ones', async () => {
    const tenant = await platform.newTenant();
    const files: [string, Buffer][] = [
      ['a.bin', unique(100)],
      ['b.bin', unique(100)],
    ];
    const spy = jest.spyOn(blobs, 'commit').mockRejectedValueOnce(new Error('disk full'));
    try {
      await sut.ingest(...args(sandboxWith(files), tenant.tenantId, 'strays'));
    } finally {
      spy.mockRestore();
    }
    // The other content was committed beside the failure; the rollback left no row for it.
    const shas = files.map(([, content]) => sha256(content));
    const strays = shas.filter((sha) => existsSync(blobPath(sha)));
    expect(strays).toHaveLength(1);
    const rowsOf = (list: string[]) => db.query(`SELECT sha256 FROM artifact_blobs WHERE sha256 = ANY($1::text[])`, [list]);
    expect(await rowsOf(shas)).toEqual([]);
    // Content an artifact references, and bytes without a row written just now (an
    // ingest whose transaction has not committed yet looks like that).
    const kept = unique(100);
    const stored = await sut.ingest(...args(sandboxWith([['kept.bin', kept]]), tenant.tenantId, 'strays-kept'));
    const recent = unique(100);
    await mkdir(join(blobPath(sha256(recent)), '..'), { recursive: true });
    await writeFile(blobPath(sha256(recent)), recent);
    const longAgo = new Date(Date.now() - STAGING_ABANDONED_AFTER_MS - 60_000);
    for (const sha of [strays[0]!, sha256(kept)]) await utimes(blobPath(sha), longAgo, longAgo);

    const folders = [...new Set([strays[0]!, sha256(kept), sha256(recent)].map((sha) => sha.slice(0, 2)))];
    const removed = await artifacts.removeStrayBlobs(new Date(Date.now() - STAGING_ABANDONED_AFTER_MS), folders);

    expect(removed).toBeGreaterThanOrEqual(1);
    expect(existsSync(blobPath(strays[0]!))).toBe(false);
    expect(await rowsOf([strays[0]!])).toEqual([]);
    expect(await artifacts.readBytes(tenant.tenantId, stored.artifacts[0]!.id)).toEqual(kept);
    expect(existsSync(blobPath(sha256(recent)))).toBe(true);
    await blobs.remove(sha256(recent));
  });

  const args = ({ sandbox, listing }: ReturnType<typeof sandboxWith>, tenantId: string, threadId: string) =>
    [sandbox, tenantId, lineageOf(threadId), listing] as const;
});
