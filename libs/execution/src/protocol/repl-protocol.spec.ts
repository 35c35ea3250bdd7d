import { encodeFrame, FrameDecodeError, FrameDecoder } from './repl-protocol.js';

const frame = (value: object) => {
  const body = Buffer.from(JSON.stringify(value));
  const header = Buffer.alloc(4);
  header.writeUInt32BE(body.length);
  return Buffer.concat([header, body]);
};

describe(FrameDecoder.name, () => {
  it('should decode frames split across chunks and several frames in one chunk', () => {
    const sut = new FrameDecoder();
    const bytes = Buffer.concat([frame({ ev: 'pong', id: 'a' }), frame({ ev: 'pong', id: 'é' })]);
    const events = [];
    for (let i = 0; i < bytes.length; i += 3) events.push(...sut.push(bytes.subarray(i, i + 3)));
    expect(events).toEqual([{ ev: 'pong', id: 'a' }, { ev: 'pong', id: 'é' }]);
    expect(new FrameDecoder().push(bytes)).toHaveLength(2);
  });

  it('should refuse a frame announcing more than the limit instead of buffering it', () => {
    const header = Buffer.alloc(4);
    header.writeUInt32BE(0xffffffff);
    expect(() => new FrameDecoder().push(header)).toThrow(FrameDecodeError);
  });

  it('should refuse a frame that is not JSON', () => {
    const body = Buffer.from('not json');
    const header = Buffer.alloc(4);
    header.writeUInt32BE(body.length);
    expect(() => new FrameDecoder().push(Buffer.concat([header, body]))).toThrow(FrameDecodeError);
  });

  it('should pass the raw bytes after an fs-file frame on as data, whatever the chunking', () => {
    const body = Buffer.from('\x00\x00\x00\x09not a frame, just bytes');
    const bytes = Buffer.concat([
      frame({ ev: 'fs-file', id: 'r', path: '/a.bin', size: body.length }),
      body,
      frame({ ev: 'fs-file-end', id: 'r', path: '/a.bin', complete: true }),
      frame({ ev: 'fs-file', id: 'r', path: '/empty', size: 0 }),
      frame({ ev: 'fs-file-end', id: 'r', path: '/empty', complete: true }),
      frame({ ev: 'fs-file', id: 'r', path: '/l', skipped: 'symlink' }),
    ]);
    for (const step of [1, 5, bytes.length]) {
      const sut = new FrameDecoder();
      const decoded = [];
      for (let i = 0; i < bytes.length; i += step) decoded.push(...sut.push(bytes.subarray(i, i + step)));
      const data = Buffer.concat(decoded.flatMap((d) => (d.ev === 'fs-data' ? [d.data] : [])));
      expect(data).toEqual(body);
      expect(decoded.filter((d) => d.ev !== 'fs-data')).toEqual([
        { ev: 'fs-file', id: 'r', path: '/a.bin', size: body.length },
        { ev: 'fs-file-end', id: 'r', path: '/a.bin', complete: true },
        { ev: 'fs-file', id: 'r', path: '/empty', size: 0 },
        { ev: 'fs-file-end', id: 'r', path: '/empty', complete: true },
        { ev: 'fs-file', id: 'r', path: '/l', skipped: 'symlink' },
      ]);
    }
  });

  it('should refuse an fs-file frame whose size is not a whole number of bytes', () => {
    for (const size of [-1, 1.5, '3']) {
      expect(() => new FrameDecoder().push(frame({ ev: 'fs-file', id: 'r', path: '/a', size }))).toThrow(FrameDecodeError);
    }
  });

  it('should encode requests the decoder reads back', () => {
    const request = { op: 'exec', id: 'x', code: 'print("ü")', timeoutMs: 5, maxOutputBytes: 10 } as const;
    const decoded = new FrameDecoder().push(encodeFrame(request));
    expect(decoded).toEqual([request]);
  });
});
