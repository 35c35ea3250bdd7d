import { createHash, randomBytes } from 'node:crypto';
import { OffThreadSha256 } from './off-thread-sha256.js';

const MiB = 1 << 20;
const sha256 = (bytes: Buffer) => createHash('sha256').update(bytes).digest('hex');

// Feeds `bytes` in chunks of the given sizes (cycled), waiting when update() says to.
async function feed(hasher: OffThreadSha256, bytes: Buffer, chunkSizes: number[]): Promise<{ sha256: string; waits: number }> {
  const stream = hasher.begin();
  let waits = 0;
  for (let at = 0, i = 0; at < bytes.length; i++) {
    const end = Math.min(bytes.length, at + chunkSizes[i % chunkSizes.length]!);
    const behind = stream.update(bytes.subarray(at, end));
    if (behind) {
      waits++;
      await behind;
    }
    at = end;
  }
  return { sha256: await stream.digest(), waits };
}

describe('OffThreadSha256', () => {
  let hasher: OffThreadSha256;

  beforeEach(() => {
    hasher = new OffThreadSha256();
  });

  afterEach(async () => {
    await hasher.close();
  });

  it('should give the digest node:crypto gives, at every size around a batch', async () => {
    for (const size of [0, 1, MiB - 1, MiB, MiB + 1, 3 * MiB + 17]) {
      const bytes = randomBytes(size);
      expect((await feed(hasher, bytes, [65_536, 1, 300_000])).sha256).toBe(sha256(bytes));
    }
  });

  it('should keep concurrent streams apart', async () => {
    const inputs = [randomBytes(5 * MiB), randomBytes(2 * MiB + 5), randomBytes(100)];
    const digests = await Promise.all(inputs.map((bytes, i) => feed(hasher, bytes, [4096 * (i + 1), 65_536])));
    expect(digests.map((d) => d.sha256)).toEqual(inputs.map(sha256));
  });

  it('should not let a chunk given to it change under the thread', async () => {
    const bytes = randomBytes(2 * MiB);
    const expected = sha256(bytes);
    const stream = hasher.begin();
    const chunk = Buffer.from(bytes.subarray(0, MiB));
    expect(stream.update(chunk)).toBeUndefined();
    // The caller reuses its buffer at once (a stream may), and still owns it.
    chunk.fill(0);
    expect(chunk.length).toBe(MiB);
    stream.update(bytes.subarray(MiB));
    expect(await stream.digest()).toBe(expected);
  });

  it('should make a stream far ahead of the thread wait, then go on', async () => {
    const bytes = randomBytes(40 * MiB);
    const stream = hasher.begin();
    let behind: Promise<void> | undefined;
    let at = 0;
    // Handed over without waiting, until the stream is told to.
    while (!behind && at < bytes.length) {
      behind = stream.update(bytes.subarray(at, at + MiB));
      at += MiB;
    }
    expect(behind).toBeInstanceOf(Promise);
    expect(at).toBeLessThan(bytes.length);
    await behind;
    while (at < bytes.length) {
      await stream.update(bytes.subarray(at, at + MiB));
      at += MiB;
    }
    expect(await stream.digest()).toBe(sha256(bytes));
  });

  it('should forget a dropped stream and answer the others', async () => {
    const dropped = hasher.begin();
    dropped.update(randomBytes(2 * MiB));
    dropped.drop();
    dropped.drop();
    const bytes = randomBytes(MiB + 3);
    expect((await feed(hasher, bytes, [65_536])).sha256).toBe(sha256(bytes));
  });

  it('should fail the streams under way when the thread stops, and start another after', async () => {
    const stream = hasher.begin();
    stream.update(randomBytes(2 * MiB));
    await hasher.close();
    expect(() => stream.update(randomBytes(10))).toThrow('the hashing thread was closed');
    await expect(Promise.resolve().then(() => stream.digest())).rejects.toThrow('the hashing thread was closed');

    const bytes = randomBytes(MiB);
    expect((await feed(hasher, bytes, [65_536])).sha256).toBe(sha256(bytes));
  });
});
