import type { IncomingMessage } from 'node:http';
import { PassThrough } from 'node:stream';
import { drainBody } from './refused-body.js';

// What drainBody reads of a request: a stream with Node's `complete` and headers.
function fakeRequest(headers: Record<string, string> = {}) {
  const req = Object.assign(new PassThrough(), { complete: false, headers });
  req.on('end', () => (req.complete = true));
  return req;
}

const bounds = { maxBytes: 1000, maxMs: 60_000 };

describe(drainBody.name, () => {
  it('should read the rest of a body to its end', async () => {
    const sut = fakeRequest();
    const drained = drainBody(sut as unknown as IncomingMessage, bounds);
    sut.write(Buffer.alloc(600));
    sut.end(Buffer.alloc(300));
    await expect(drained).resolves.toBe(true);
    expect(sut.listenerCount('data')).toBe(0);
  });

  it('should stop reading past its byte bound, leaving the rest unread', async () => {
    const sut = fakeRequest();
    const drained = drainBody(sut as unknown as IncomingMessage, bounds);
    sut.write(Buffer.alloc(800));
    sut.write(Buffer.alloc(800));
    await expect(drained).resolves.toBe(false);
    expect(sut.isPaused()).toBe(true);
    sut.write(Buffer.alloc(800));
    expect(sut.readableLength).toBeGreaterThanOrEqual(800);
  });

  it('should not read a body whose declared length is past its bound', async () => {
    const sut = fakeRequest({ 'content-length': '5000' });
    await expect(drainBody(sut as unknown as IncomingMessage, bounds)).resolves.toBe(false);
    expect(sut.listenerCount('data')).toBe(0);
  });

  it('should give up on a body that does not end within its time bound', async () => {
    const sut = fakeRequest();
    const drained = drainBody(sut as unknown as IncomingMessage, { maxBytes: 1000, maxMs: 20 });
    sut.write(Buffer.alloc(10));
    await expect(drained).resolves.toBe(false);
  });

  it('should take a body already read whole as drained', async () => {
    const sut = fakeRequest();
    sut.complete = true;
    await expect(drainBody(sut as unknown as IncomingMessage, bounds)).resolves.toBe(true);
  });
});
