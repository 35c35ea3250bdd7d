import { EventEmitter } from 'node:events';
import { routeProcessWarnings, type WarningLogger, type WarningProcess } from './process-warnings.js';

describe(routeProcessWarnings.name, () => {
  const setup = () => {
    const proc = new EventEmitter();
    const printed: string[] = [];
    // Node's printer, as Node installs it before the app's code runs.
    proc.on('warning', (warning: Error) => printed.push(`${warning.name}: ${warning.message}`));
    const logged: Parameters<WarningLogger['warn']>[] = [];
    const logger: WarningLogger = { warn: (...args) => logged.push(args) };
    const sut = routeProcessWarnings(proc as unknown as WarningProcess);
    const warn = (message: string, name = 'DeprecationWarning', code?: string) =>
      proc.emit('warning', Object.assign(new Error(message), { name }, code ? { code } : {}));
    return { sut, logger, printed, logged, warn };
  };

  it("should log a warning through the logger instead of Node's printer", () => {
    const { sut, logger, printed, logged, warn } = setup();
    sut.to(logger);
    warn('Buffer() is deprecated', 'DeprecationWarning', 'DEP0005');
    expect(printed).toEqual([]);
    expect(logged).toEqual([
      [
        { warning: { name: 'DeprecationWarning', message: 'Buffer() is deprecated', code: 'DEP0005', stack: expect.any(String) } },
        'DeprecationWarning: Buffer() is deprecated',
      ],
    ]);
  });

  it('should hold the warnings of start-up until the logger exists', () => {
    const { sut, logger, printed, logged, warn } = setup();
    warn('early', 'ExperimentalWarning');
    expect(logged).toEqual([]);
    sut.to(logger);
    expect(logged.map(([, message]) => message)).toEqual(['ExperimentalWarning: early']);
    expect(printed).toEqual([]);
  });

  it("should give held warnings and later ones back to Node's printer when the app does not start", () => {
    const { sut, printed, logged, warn } = setup();
    warn('early');
    sut.release();
    warn('late');
    expect(printed).toEqual(['DeprecationWarning: early', 'DeprecationWarning: late']);
    expect(logged).toEqual([]);
  });
});
