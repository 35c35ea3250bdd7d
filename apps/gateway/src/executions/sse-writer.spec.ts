import type { ServerResponse } from 'node:http';
import { SerializedJson, SseWriter } from './sse-writer.js';

// A response that records what is written to it.
function recordingResponse() {
  const written: Buffer[] = [];
  const res = {
    statusCode: 0,
    setHeader: () => undefined,
    flushHeaders: () => undefined,
    cork: () => undefined,
    uncork: () => undefined,
    write: (chunk: string | Buffer) => written.push(Buffer.from(chunk)),
    end: () => undefined,
  };
  return { res: { raw: res as unknown as ServerResponse, hijack: () => undefined }, text: () => Buffer.concat(written).toString('utf8') };
}

describe(SseWriter.name, () => {
  it('should write serialized JSON as the same event the value itself gives', () => {
    const value = { messages: [{ type: 'human', content: 'line one\nline two "quoted" \u2028' }], n: 1 };
    const plain = recordingResponse();
    const serialized = recordingResponse();

    new SseWriter(plain.res).send('values', value);
    new SseWriter(serialized.res).send('values', new SerializedJson(Buffer.from(JSON.stringify(value))));

    expect(serialized.text()).toBe(plain.text());
    expect(serialized.text()).toBe(`event: values\ndata: ${JSON.stringify(value)}\n\n`);
  });
});
