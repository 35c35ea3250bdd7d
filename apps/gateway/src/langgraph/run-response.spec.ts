import { jest } from '@jest/globals';
import { EventEmitter } from 'node:events';
import type { ServerResponse } from 'node:http';
import { abortOnClose, JsonKeepAlive } from './run-response.js';

// Enough of Node's response to watch what is written, and of Fastify's reply to take it
// over.
class FakeResponse extends EventEmitter {
  headersSent = false;
  writableEnded = false;
  writableFinished = false;
  destroyed = false;
  statusCode = 0;
  headers: Record<string, string | number> = {};
  body = '';
  setHeader(name: string, value: string | number) {
    this.headers[name.toLowerCase()] = value;
  }
  flushHeaders() {
    this.headersSent = true;
  }
  corked = 0;
  writesWhileCorked = 0;
  write(chunk: string | Buffer) {
    this.headersSent = true;
    this.body += chunk.toString();
    if (this.corked > 0) this.writesWhileCorked++;
    return true;
  }
  cork() {
    this.corked++;
  }
  uncork() {
    this.corked--;
  }
  end(chunk: string | Buffer = '') {
    this.body += chunk.toString();
    this.writableEnded = this.writableFinished = true;
  }
}

const replyOf = (res: FakeResponse) => ({ raw: res as unknown as ServerResponse, hijack: () => undefined });

describe(JsonKeepAlive.name, () => {
  beforeEach(() => jest.useFakeTimers());
  afterEach(() => jest.useRealTimers());

  it('should answer a quick run as plain JSON', () => {
    const res = new FakeResponse();
    const sut = new JsonKeepAlive(replyOf(res), 1000);

    sut.finish({ messages: [] });

    expect(sut.started).toBe(false);
    expect(res.statusCode).toBe(200);
    expect(JSON.parse(res.body)).toEqual({ messages: [] });
  });

  it('should answer serialized chunks in order under one Content-Length, in one corked write', () => {
    const res = new FakeResponse();
    const sut = new JsonKeepAlive(replyOf(res), 1000);
    const chunks = [Buffer.from('{"messages":'), Buffer.from('[{"content":"héllo"}'), Buffer.from(']'), Buffer.from('}')];

    sut.finishJson(chunks);

    expect(JSON.parse(res.body)).toEqual({ messages: [{ content: 'héllo' }] });
    expect(res.headers['content-length']).toBe(Buffer.concat(chunks).length);
    expect(res.writesWhileCorked).toBe(chunks.length);
    expect(res.corked).toBe(0);
  });

  it('should send the headers and a newline per interval while a run is long, then the JSON', () => {
    const res = new FakeResponse();
    const sut = new JsonKeepAlive(replyOf(res), 1000);

    jest.advanceTimersByTime(2500);
    sut.finish({ __error__: { error: 'RUN_FAILED', message: 'boom' } });

    expect(sut.started).toBe(true);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.body.startsWith('\n\n{')).toBe(true);
    expect(JSON.parse(res.body)).toEqual({ __error__: { error: 'RUN_FAILED', message: 'boom' } });
  });

  it('should write an answer serialized beforehand as is, with its length', () => {
    const res = new FakeResponse();
    const sut = new JsonKeepAlive(replyOf(res), 1000);

    sut.finishJson(Buffer.from('{"messages":["é"]}'));

    expect(res.statusCode).toBe(200);
    expect(res.headers['content-type']).toMatch(/application\/json/);
    expect(res.headers['content-length']).toBe(19); // é is two bytes
    expect(JSON.parse(res.body)).toEqual({ messages: ['é'] });
  });

  it('should stop pinging once stopped', () => {
    const res = new FakeResponse();
    const sut = new JsonKeepAlive(replyOf(res), 1000);

    sut.stop();
    jest.advanceTimersByTime(5000);

    expect(res.body).toBe('');
  });
});

describe(abortOnClose.name, () => {
  it('should abort when the connection closes before the answer is complete', () => {
    const res = new FakeResponse();
    const sut = abortOnClose(res as unknown as ServerResponse);

    res.emit('close');

    expect(sut.signal.aborted).toBe(true);
  });

  it('should not abort after a complete answer', () => {
    const res = new FakeResponse();
    const sut = abortOnClose(res as unknown as ServerResponse);

    res.end('{}');
    res.emit('close');

    expect(sut.signal.aborted).toBe(false);
  });
});
