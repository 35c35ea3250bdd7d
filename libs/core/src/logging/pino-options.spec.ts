import { mkdtempSync, readFileSync, rmSync } from 'node:fs';
import { tmpdir } from 'node:os';
import { join } from 'node:path';
import { setTimeout as sleep } from 'node:timers/promises';
import { pino } from 'pino';
import { flushedEvery } from './pino-options.js';

describe(flushedEvery.name, () => {
  let dir: string;
  beforeEach(() => (dir = mkdtempSync(join(tmpdir(), 'drydock-log-'))));
  afterEach(() => rmSync(dir, { recursive: true, force: true }));

  function destination() {
    const file = join(dir, 'out.log');
    const boom = flushedEvery(pino.destination({ dest: file, sync: false, minLength: 4096, mkdir: true }), 20);
    const writes: number[] = [];
    boom.on('write', (n: number) => writes.push(n));
    return { boom, file, writes };
  }

  it('should write a line shorter than the buffer within the flush period', async () => {
    const { boom, file } = destination();
    await new Promise((resolve) => boom.once('ready', resolve));
    boom.write('{"msg":"one line"}\n');
    await sleep(200);
    expect(readFileSync(file, 'utf8')).toBe('{"msg":"one line"}\n');
    boom.end();
  });

  it('should not write at all while nothing is logged', async () => {
    const { boom, writes } = destination();
    await new Promise((resolve) => boom.once('ready', resolve));
    boom.write('{"msg":"é, not ASCII"}\n');
    await sleep(100);
    expect(writes).toEqual([Buffer.byteLength('{"msg":"é, not ASCII"}\n')]);
    // Ten flush periods with nothing logged: no write, not even an empty one.
    await sleep(200);
    expect(writes).toHaveLength(1);
    boom.end();
  });
});
