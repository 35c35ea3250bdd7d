import { repeatedErrorLogger } from './repeated-errors.js';

describe(repeatedErrorLogger.name, () => {
  it('should log the first error, hold back repeats for the interval, then report them with the next', () => {
    const lines: string[] = [];
    let clock = 0;
    const onError = repeatedErrorLogger({ warn: (line: string) => void lines.push(line) }, 'queue q', 60_000, () => clock);
    onError(new Error('connect ECONNREFUSED'));
    for (let i = 0; i < 25; i++) {
      clock += 100;
      onError(new Error('connect ECONNREFUSED'));
    }
    expect(lines).toEqual(['queue q: connect ECONNREFUSED']);
    clock = 60_000;
    onError(new Error('Connection is closed.'));
    expect(lines[1]).toBe('queue q: Connection is closed. (and 25 more errors since the last report)');
  });
});
