import { EventEmitter } from 'node:events';
import { logFatalErrors, type FatalLogger } from './fatal-errors.js';

class FakeProcess extends EventEmitter {
  exits: number[] = [];
  exit(code: number): never {
    this.exits.push(code);
    return undefined as never;
  }
}

describe('logFatalErrors', () => {
  it('should log an uncaught error as one fatal line with its origin, then stop with status 1', () => {
    const proc = new FakeProcess();
    const lines: [unknown, string][] = [];
    logFatalErrors({ fatal: (details, message) => lines.push([details, message]) }, proc);
    const error = new Error('boom');
    proc.emit('uncaughtException', error, 'uncaughtException');
    expect(lines).toEqual([[{ err: error, origin: 'uncaughtException' }, 'an error nothing caught: the process stops']]);
    expect(proc.exits).toEqual([1]);
  });

  it('should name an unhandled rejection as such', () => {
    const proc = new FakeProcess();
    const lines: string[] = [];
    logFatalErrors({ fatal: (_details, message) => lines.push(message) }, proc);
    proc.emit('uncaughtException', new Error('rejected'), 'unhandledRejection');
    expect(lines).toEqual(['a promise rejection nothing handled: the process stops']);
    expect(proc.exits).toEqual([1]);
  });

  it('should still stop the process when logging fails', () => {
    const proc = new FakeProcess();
    const broken: FatalLogger = {
      fatal: () => {
        throw new Error('stdout is gone');
      },
    };
    logFatalErrors(broken, proc);
    expect(() => proc.emit('uncaughtException', new Error('boom'), 'uncaughtException')).toThrow('stdout is gone');
    expect(proc.exits).toEqual([1]);
  });
});
