import { readdirSync, readFileSync } from 'node:fs';
import { join, resolve } from 'node:path';
import { outcomeFromDone } from '../runtime/sandbox-runtime.js';
import { encodeFrame, FrameDecoder, type DoneFrame, type ExecutionStatus, type RecycledEvent, type ReplEvent, type ReplRequest } from './repl-protocol.js';

// The golden frames of docker/sandbox/repl/frames/, which the supervisor's Python tests
// hold it to: what the worker sends must be what the supervisor reads, and what the
// supervisor sends must be what these types say.
const FRAMES = resolve('docker/sandbox/repl/frames');
const read = (kind: string) =>
  readdirSync(join(FRAMES, kind))
    .filter((name) => name.endsWith('.json'))
    .map((name) => ({ name, frame: JSON.parse(readFileSync(join(FRAMES, kind, name), 'utf8')) as Record<string, unknown> }));

// Each list is typed with the union's own keys: a renamed field breaks this build.
const OPS: ReplRequest['op'][] = [
  'exec', 'fs-delete', 'fs-read', 'fs-write', 'ping', 'shutdown', 'recycle', 'interrupt', 'bg-read', 'bg-unwatch', 'bg-stdin', 'bg-signal',
  'pty-open', 'pty-input', 'pty-resize', 'pty-close', 'checkpoint', 'fs-list',
];
const EVENTS: ReplEvent['ev'][] = [
  'ready', 'pong', 'stream', 'done', 'fs-deleted', 'fs-written', 'fs-file', 'fs-file-end', 'recycled', 'protocol_error',
  'bg-started', 'bg-refused', 'bg-output', 'bg-chunk', 'bg-exit', 'bg-stdin-done', 'bg-signalled',
  'pty-opened', 'pty-refused', 'pty-output', 'pty-exit', 'checkpoint-ready', 'checkpoint-refused', 'fs-listed',
];
const STATUSES: ExecutionStatus[] = ['ok', 'error', 'timeout', 'memory', 'killed'];
const DONE_FIELDS: (keyof DoneFrame)[] = [
  'ev', 'id', 'status', 'stdout', 'stderr', 'truncated', 'result', 'error', 'stateLost', 'durationMs', 'cpuMs', 'files', 'artifacts', 'figures',
];
const RECYCLED_FIELDS: (keyof RecycledEvent)[] = ['ev', 'id', 'clean', 'problems', 'durationMs'];

describe('REPL protocol golden frames', () => {
  it('should read every request example as the worker encodes it', () => {
    const requests = read('requests');
    // One example at least of every request the worker can send.
    expect([...new Set(requests.map(({ frame }) => frame.op))].sort()).toEqual([...OPS].sort());
    for (const { name, frame } of requests) {
      expect([name, OPS.includes(frame.op as ReplRequest['op'])]).toEqual([name, true]);
      const bytes = encodeFrame(frame as unknown as ReplRequest);
      expect(bytes.readUInt32BE(0)).toBe(bytes.length - 4);
      expect(JSON.parse(bytes.subarray(4).toString('utf8'))).toEqual(frame);
    }
  });

  it('should decode every event example into the event the types describe', () => {
    const events = read('events');
    // One example at least of every event the supervisor can send.
    expect([...new Set(events.map(({ frame }) => frame.ev))].sort()).toEqual([...EVENTS].sort());
    for (const { name, frame } of events) {
      const [decoded] = new FrameDecoder().push(Buffer.concat([lengthOf(frame), Buffer.from(JSON.stringify(frame))]));
      expect(decoded).toEqual(frame);
      expect([name, EVENTS.includes(decoded!.ev as ReplEvent['ev'])]).toEqual([name, true]);
    }
  });

  it('should turn every done example into a run outcome with all its fields', () => {
    const dones = read('events').filter(({ frame }) => frame.ev === 'done');
    expect([...new Set(dones.map((d) => d.frame.status))].sort()).toEqual([...STATUSES].sort());
    for (const { frame } of dones) {
      for (const field of DONE_FIELDS) expect(frame).toHaveProperty(field);
      const outcome = outcomeFromDone(frame as unknown as DoneFrame);
      expect(outcome.status).toBe(frame.status);
      expect(outcome.stateLost).toBe(frame.stateLost);
      expect(outcome.files).toEqual(frame.files);
      expect(outcome.artifacts).toEqual(frame.artifacts);
      expect(outcome.figures).toEqual(frame.figures);
      if ('exitCode' in frame) {
        // A command: `error` is null when the process ended by itself (its exit code or
        // signal says how), set when the platform ended it (docker/sandbox/repl/README.md).
        expect([frame.status, outcome.error === null]).toEqual([frame.status, frame.status === 'ok' || frame.status === 'error']);
        expect([outcome.exitCode, outcome.signal]).toEqual([frame.exitCode, frame.signal]);
      } else {
        // `error` is null exactly for ok (docker/sandbox/repl/README.md).
        expect([frame.status, outcome.error === null]).toEqual([frame.status, frame.status === 'ok']);
      }
    }
  });

  it('should keep a figure-only result as just its png, and null representations out', () => {
    const figure = read('events').find(({ name }) => name === 'done-figure.json')!.frame as unknown as DoneFrame;
    expect(outcomeFromDone(figure).result).toEqual({ png: figure.result!.png });
    const ok = read('events').find(({ name }) => name === 'done-ok.json')!.frame as unknown as DoneFrame;
    expect(outcomeFromDone(ok).result).toEqual({ text: ok.result!.text });
  });

  it('should have every field of the recycled answer and the features of ready', () => {
    const events = read('events');
    for (const { frame } of events.filter(({ frame }) => frame.ev === 'recycled')) {
      expect(Object.keys(frame).sort()).toEqual([...RECYCLED_FIELDS].sort());
    }
    const ready = events.find(({ frame }) => frame.ev === 'ready')!.frame as Extract<ReplEvent, { ev: 'ready' }>;
    expect(ready.features).toEqual(expect.arrayContaining(['recycle', 'fs-read', 'fs-write', 'fs-list', 'interrupt', 'commands', 'background', 'terminals']));
  });
});

function lengthOf(frame: object): Buffer {
  const header = Buffer.alloc(4);
  header.writeUInt32BE(Buffer.byteLength(JSON.stringify(frame)));
  return header;
}
