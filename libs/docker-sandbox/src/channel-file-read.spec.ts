import type { Readable } from 'node:stream';
import type { SessionTreeEntry } from '@drydock/execution';
import { ChannelFileRead } from './channel-file-read.js';

// A channel that records whether it is paused.
function flow() {
  const state = { paused: false, pauses: 0 };
  return {
    state,
    flow: {
      pause: () => {
        state.paused = true;
        state.pauses++;
      },
      resume: () => {
        state.paused = false;
      },
    },
  };
}

async function read(content: NodeJS.ReadableStream): Promise<Buffer> {
  const chunks: Buffer[] = [];
  for await (const chunk of content as AsyncIterable<Buffer>) chunks.push(chunk);
  return Buffer.concat(chunks);
}

describe(ChannelFileRead.name, () => {
  it('should give every answer in order, each file with the bytes that followed its header', async () => {
    const { flow: f } = flow();
    const sut = new ChannelFileRead('r', 3, 1 << 30, f);
    const got: { path: string; kind: string; bytes?: string }[] = [];
    const consuming = (async () => {
      for await (const entry of sut.entries()) {
        got.push({ path: entry.path, kind: entry.kind, ...(entry.kind === 'file' ? { bytes: (await read(entry.content)).toString() } : {}) });
      }
    })();
    sut.onFile({ ev: 'fs-file', id: 'r', path: '/a', size: 5 });
    sut.onData(Buffer.from('he'));
    sut.onData(Buffer.from('llo'));
    sut.onFileEnd({ ev: 'fs-file-end', id: 'r', path: '/a', complete: true });
    sut.onFile({ ev: 'fs-file', id: 'r', path: '/l', skipped: 'symlink' });
    expect(sut.finished).toBe(false);
    sut.onFile({ ev: 'fs-file', id: 'r', path: '/e', size: 0 });
    sut.onFileEnd({ ev: 'fs-file-end', id: 'r', path: '/e', complete: true });
    expect(sut.finished).toBe(true);
    await consuming;
    expect(got).toEqual([
      { path: '/a', kind: 'file', bytes: 'hello' },
      { path: '/l', kind: 'symlink' },
      { path: '/e', kind: 'file', bytes: '' },
    ]);
  });

  it('should pause the channel while the reader is behind and resume it when it reads on', async () => {
    const { flow: f, state } = flow();
    const sut = new ChannelFileRead('r', 1, 1 << 30, f);
    const entries = sut.entries();
    sut.onFile({ ev: 'fs-file', id: 'r', path: '/big', size: 3 << 20 });
    const entry = (await entries.next()).value as SessionTreeEntry;
    for (let i = 0; i < 3 * 16; i++) sut.onData(Buffer.alloc(64 << 10, i));
    expect(state.paused).toBe(true);
    const body = read(entry.content);
    await new Promise((resolve) => setImmediate(resolve));
    expect(state.paused).toBe(false);
    sut.onFileEnd({ ev: 'fs-file-end', id: 'r', path: '/big', complete: true });
    expect((await body).length).toBe(3 << 20);
  });

  it('should fail a file the supervisor marked incomplete', async () => {
    const { flow: f } = flow();
    const sut = new ChannelFileRead('r', 1, 1 << 30, f);
    const entries = sut.entries();
    sut.onFile({ ev: 'fs-file', id: 'r', path: '/churn', size: 4 });
    const entry = (await entries.next()).value as SessionTreeEntry;
    sut.onData(Buffer.from('\0\0\0\0'));
    sut.onFileEnd({ ev: 'fs-file-end', id: 'r', path: '/churn', complete: false });
    await expect(read(entry.content)).rejects.toThrow('/churn changed while it was read');
  });

  // A file's header, bytes and incomplete end can arrive in one read of the channel,
  // before the reader has taken the entry: the failure must wait for the reader, not
  // be thrown as an 'error' nobody listens to (that crashed the worker process).
  it('should keep the failure of a file for its reader when it came before the reader looked', async () => {
    const { flow: f } = flow();
    const sut = new ChannelFileRead('r', 2, 1 << 30, f);
    sut.onFile({ ev: 'fs-file', id: 'r', path: '/churn', size: 4 });
    sut.onData(Buffer.from('\0\0\0\0'));
    sut.onFileEnd({ ev: 'fs-file-end', id: 'r', path: '/churn', complete: false });
    sut.onFile({ ev: 'fs-file', id: 'r', path: '/next', size: 2 });
    sut.onData(Buffer.from('ok'));
    sut.onFileEnd({ ev: 'fs-file-end', id: 'r', path: '/next', complete: true });
    // Past the ticks on which an unheard 'error' would have been thrown.
    await new Promise((resolve) => setTimeout(resolve, 10));
    const entries = sut.entries();
    const churn = (await entries.next()).value as SessionTreeEntry;
    await expect(read(churn.content)).rejects.toThrow('/churn changed while it was read');
    const next = (await entries.next()).value as SessionTreeEntry;
    expect((await read(next.content)).toString()).toBe('ok');
  });

  it('should drop what a reader skips or leaves, and keep the channel flowing', async () => {
    const { flow: f, state } = flow();
    const sut = new ChannelFileRead('r', 3, 1 << 30, f);
    const entries = sut.entries();
    sut.onFile({ ev: 'fs-file', id: 'r', path: '/skipped', size: 2 << 20 });
    await entries.next(); // not read
    for (let i = 0; i < 17; i++) sut.onData(Buffer.alloc(64 << 10));
    expect(state.paused).toBe(true);
    const next = entries.next(); // moving on drops the rest
    expect(state.paused).toBe(false);
    for (let i = 17; i < 32; i++) sut.onData(Buffer.alloc(64 << 10));
    sut.onFileEnd({ ev: 'fs-file-end', id: 'r', path: '/skipped', complete: true });
    sut.onFile({ ev: 'fs-file', id: 'r', path: '/b', size: 1 });
    const b = (await next).value as SessionTreeEntry;
    expect(b.path).toBe('/b');
    await entries.return(undefined); // the reader stops early
    sut.onData(Buffer.from('x'));
    sut.onFileEnd({ ev: 'fs-file-end', id: 'r', path: '/b', complete: true });
    sut.onFile({ ev: 'fs-file', id: 'r', path: '/c', size: 1 });
    sut.onData(Buffer.from('y'));
    expect(state.paused).toBe(false);
    expect((b.content as Readable).destroyed).toBe(true);
    sut.onFileEnd({ ev: 'fs-file-end', id: 'r', path: '/c', complete: true });
    expect(sut.finished).toBe(true);
  });

  it('should not accept a file over the size asked, nor more answers than paths', () => {
    const { flow: f } = flow();
    const sut = new ChannelFileRead('r', 1, 100, f);
    expect(sut.accepts({ ev: 'fs-file', id: 'r', path: '/big', size: 101 })).toBe(false);
    expect(sut.accepts({ ev: 'fs-file', id: 'r', path: '/ok', size: 100 })).toBe(true);
    sut.onFile({ ev: 'fs-file', id: 'r', path: '/ok', size: 100 });
    expect(sut.accepts({ ev: 'fs-file', id: 'r', path: '/extra', skipped: 'vanished' })).toBe(false);
  });

  it('should end the entries with the error when the sandbox goes away', async () => {
    const { flow: f } = flow();
    const sut = new ChannelFileRead('r', 2, 1 << 30, f);
    const entries = sut.entries();
    sut.onFile({ ev: 'fs-file', id: 'r', path: '/a', size: 10 });
    const a = (await entries.next()).value as SessionTreeEntry;
    const body = read(a.content);
    sut.fail(new Error('the sandbox channel closed'));
    await expect(body).rejects.toThrow('the sandbox channel closed');
    await expect(entries.next()).rejects.toThrow('the sandbox channel closed');
  });
});
