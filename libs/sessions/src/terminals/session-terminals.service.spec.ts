import { jest } from '@jest/globals';
import type { Redis } from 'ioredis';
import {
  JobName,
  TERMINAL_LEASE_MS,
  TERMINAL_PING_MS,
  terminalInputChannel,
  terminalOutputChannel,
  type JobDispatcher,
  type TerminalInputMessage,
  type TerminalOutputMessage,
} from '@drydock/execution';
import { makeLimits } from '../../../../test/factories/limits.factory.js';
import type { SessionRecord } from '../sessions.repository.js';
import type { SessionsService } from '../sessions.service.js';
import { SessionTerminalsService, terminalSizeOf, type TerminalSink } from './session-terminals.service.js';

const session = {
  id: 'ses_1',
  tenantId: 'ten_1',
  threadId: 'thr_1',
  status: 'ready',
  workerId: 'w1',
  limits: makeLimits(),
  storage: 'tmpfs',
  datasets: [],
} as unknown as SessionRecord;

// The dispatcher as pub/sub and a job queue played here: what the gateway publishes is
// kept by topic, and `deliver` plays the worker's messages on a topic.
function fakeDispatcher(answer: () => Promise<unknown> = async () => ({ pid: 42 })) {
  const published: { topic: string; message: unknown }[] = [];
  const listeners = new Map<string, (message: unknown) => void>();
  const jobs: { workerId: string; name: string; data: unknown }[] = [];
  const dispatcher = {
    async subscribe(topic: string, onMessage: (message: unknown) => void) {
      listeners.set(topic, onMessage);
      return async () => void listeners.delete(topic);
    },
    async publish(topic: string, message: unknown) {
      published.push({ topic, message });
    },
    async dispatch(workerId: string, name: string, data: unknown) {
      jobs.push({ workerId, name, data });
      return answer();
    },
  } as unknown as JobDispatcher;
  const deliver = (terminalId: string, message: TerminalOutputMessage) => listeners.get(terminalOutputChannel(terminalId))?.(message);
  const sent = (terminalId: string) => published.filter((p) => p.topic === terminalInputChannel(terminalId)).map((p) => p.message as TerminalInputMessage);
  return { dispatcher, published, listeners, jobs, deliver, sent };
}

function fakeRedis() {
  const values = new Map<string, string>();
  return {
    values,
    redis: {
      async set(key: string, value: string) {
        values.set(key, value);
        return 'OK';
      },
      async getdel(key: string) {
        const value = values.get(key) ?? null;
        values.delete(key);
        return value;
      },
    } as unknown as Redis,
  };
}

const sessions = (row: SessionRecord = session) =>
  ({
    get: async (tenantId: string, id: string) => {
      if (tenantId !== row.tenantId || id !== row.id) throw new Error('not found');
      return row;
    },
    ensurePlaced: async (s: SessionRecord) => s,
    onItsWorker: (s: SessionRecord, send: (placed: SessionRecord) => Promise<unknown>) => send(s),
  }) as unknown as SessionsService;

function recordingSink() {
  const shown: string[] = [];
  const exits: Parameters<TerminalSink['exit']>[0][] = [];
  return { shown, exits, sink: { output: (data: Buffer) => shown.push(data.toString()), exit: (end: Parameters<TerminalSink['exit']>[0]) => exits.push(end) } };
}

describe('SessionTerminalsService', () => {
  afterEach(() => jest.useRealTimers());

  it('should open on the session worker, listening first, and keep early output for the socket', async () => {
    const fake = fakeDispatcher();
    const service = new SessionTerminalsService(fake.dispatcher, fakeRedis().redis, sessions());
    const terminal = await service.open('ten_1', 'ses_1', { cols: 100, rows: 30 });
    expect(fake.jobs).toEqual([{ workerId: 'w1', name: JobName.OpenTerminal, data: expect.objectContaining({ terminalId: terminal.id, cols: 100, rows: 30 }) }]);
    expect(terminal.pid).toBe(42);
    fake.deliver(terminal.id, { type: 'output', data64: Buffer.from('$ ').toString('base64') });
    const { sink, shown } = recordingSink();
    terminal.attach(sink);
    fake.deliver(terminal.id, { type: 'output', data64: Buffer.from('ls\r\n').toString('base64') });
    expect(shown).toEqual(['$ ', 'ls\r\n']);
    terminal.input(Buffer.from('x'));
    terminal.resize({ cols: 90, rows: 20 });
    terminal.close();
    terminal.close();
    expect(fake.sent(terminal.id)).toEqual([{ type: 'input', data64: 'eA==' }, { type: 'resize', cols: 90, rows: 20 }, { type: 'close' }]);
    terminal.input(Buffer.from('late'));
    expect(fake.sent(terminal.id)).toHaveLength(3);
  });

  it('should pass the exit on once, even when it came before the socket was attached', async () => {
    const fake = fakeDispatcher();
    const terminal = await new SessionTerminalsService(fake.dispatcher, fakeRedis().redis, sessions()).open('ten_1', 'ses_1', { cols: 80, rows: 24 });
    fake.deliver(terminal.id, { type: 'exit', exitCode: 3, signal: null });
    fake.deliver(terminal.id, { type: 'exit', exitCode: 4, signal: null });
    const { sink, exits } = recordingSink();
    terminal.attach(sink);
    expect(exits).toEqual([{ exitCode: 3, signal: null }]);
    // Ended: the output channel is left, and a close sends nothing.
    await new Promise((resolve) => setImmediate(resolve));
    expect(fake.listeners.size).toBe(0);
    terminal.close();
    expect(fake.sent(terminal.id)).toEqual([]);
  });

  it('should ping the worker, and end the terminal when the worker stops answering', async () => {
    jest.useFakeTimers();
    const fake = fakeDispatcher();
    const terminal = await new SessionTerminalsService(fake.dispatcher, fakeRedis().redis, sessions()).open('ten_1', 'ses_1', { cols: 80, rows: 24 });
    const { sink, exits } = recordingSink();
    terminal.attach(sink);
    jest.advanceTimersByTime(TERMINAL_PING_MS);
    expect(fake.sent(terminal.id)).toEqual([{ type: 'ping' }]);
    fake.deliver(terminal.id, { type: 'pong' });
    jest.advanceTimersByTime(TERMINAL_LEASE_MS);
    expect(exits).toEqual([]);
    jest.advanceTimersByTime(TERMINAL_LEASE_MS);
    expect(exits).toEqual([{ exitCode: null, signal: null, reason: "The terminal's worker stopped answering." }]);
  });

  it('should leave nothing listening when the worker refuses the terminal', async () => {
    const refusal = new Error('TERMINAL_LIMIT');
    const fake = fakeDispatcher(async () => Promise.reject(refusal));
    await expect(new SessionTerminalsService(fake.dispatcher, fakeRedis().redis, sessions()).open('ten_1', 'ses_1', { cols: 80, rows: 24 })).rejects.toBe(refusal);
    expect(fake.listeners.size).toBe(0);
  });

  it('should give a token that opens only its session, once, and store only its digest', async () => {
    const { redis, values } = fakeRedis();
    const service = new SessionTerminalsService(fakeDispatcher().dispatcher, redis, sessions());
    const { token, expiresAt } = await service.createToken('ten_1', 'ses_1');
    expect(token).toMatch(/^pty_[A-Za-z0-9_-]{32}$/);
    expect(new Date(expiresAt).getTime()).toBeGreaterThan(Date.now());
    expect([...values.keys()].some((key) => key.includes(token))).toBe(false);
    const second = (await service.createToken('ten_1', 'ses_1')).token;
    await expect(service.redeemToken(second, 'ses_2')).rejects.toMatchObject({ code: 'INVALID_PTY_TOKEN' });
    await expect(service.redeemToken(second, 'ses_1')).rejects.toMatchObject({ code: 'INVALID_PTY_TOKEN' });
    await expect(service.redeemToken(token, 'ses_1')).resolves.toBe('ten_1');
    await expect(service.redeemToken(token, 'ses_1')).rejects.toMatchObject({ code: 'INVALID_PTY_TOKEN', status: 401 });
  });

  it('should take sizes of 1 to 1000 from the query, defaulting to 80 x 24', () => {
    expect(terminalSizeOf(undefined, undefined)).toEqual({ cols: 80, rows: 24 });
    expect(terminalSizeOf('120', '40')).toEqual({ cols: 120, rows: 40 });
    expect(terminalSizeOf(1000, 1)).toEqual({ cols: 1000, rows: 1 });
    for (const [cols, rows] of [['0', '24'], ['80', '1001'], ['8.5', '24'], ['-1', '24'], ['abc', '24'], [80, true]] as const) {
      expect(() => terminalSizeOf(cols, rows)).toThrow(expect.objectContaining({ code: 'INVALID_TERMINAL_SIZE', status: 400 }));
    }
  });
});
