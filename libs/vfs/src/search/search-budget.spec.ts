import { setTimeout as sleep } from 'node:timers/promises';
import vm from 'node:vm';
import { SearchBudget } from './search-budget.js';

// A script that holds the thread for `ms` milliseconds, as a slow pattern does.
const busy = (ms: number) => new vm.Script(`var until = Date.now() + ${ms}; while (Date.now() < until) {} true`);

function code(run: () => unknown): string | undefined {
  try {
    run();
    return undefined;
  } catch (error) {
    return (error as { code?: string }).code;
  }
}

describe('SearchBudget', () => {
  it('should count only the time spent matching, not the waits between matches', async () => {
    const budget = new SearchBudget('pattern', 600);
    const context = vm.createContext({});

    expect(budget.run(busy(60), context)).toBe(true);
    // Reading the next files takes longer than the whole budget: it is not the pattern's time.
    await sleep(700);
    expect(budget.run(busy(60), context)).toBe(true);
    expect(budget.run(busy(60), context)).toBe(true);
    // About 180 ms spent (more on a busy machine): 600 more is over the budget, and the
    // match is interrupted.
    expect(code(() => budget.run(busy(600), context))).toBe('SEARCH_TIMEOUT');
    // Once spent, every further match is refused at once.
    expect(code(() => budget.run(busy(0), context))).toBe('SEARCH_TIMEOUT');
  });

  it('should interrupt a pattern that never finishes within the budget', () => {
    const budget = new SearchBudget('^(a+)+$', 100);
    const context = vm.createContext({ line: `${'a'.repeat(40)}!` });
    const started = Date.now();

    expect(code(() => budget.run(new vm.Script('/^(a+)+$/.test(line)'), context))).toBe('SEARCH_TIMEOUT');
    expect(Date.now() - started).toBeLessThan(5_000);
  });
});
