import { ConfigError } from '../config/app-config.js';
import { applyHeapGrowingPolicy, DEFAULT_HEAP_GROWING_PERCENT, heapGrowingPolicy } from './heap-growing.js';

describe(applyHeapGrowingPolicy.name, () => {
  const apply = (env: NodeJS.ProcessEnv, execArgv: string[] = []) => {
    const set: string[] = [];
    const policy = applyHeapGrowingPolicy(env, execArgv, (flags) => set.push(flags));
    return { policy, set };
  };

  it('should give V8 a growing factor of 2 when nothing is configured', () => {
    expect(DEFAULT_HEAP_GROWING_PERCENT).toBe(100);
    expect(apply({})).toEqual({ policy: { percent: 100, source: 'default' }, set: ['--heap-growing-percent=100'] });
    expect(apply({ DRYDOCK_HEAP_GROWING_PERCENT: '  ' }).set).toEqual(['--heap-growing-percent=100']);
  });

  it('should take the setting, and leave V8 its own factor at 0', () => {
    expect(apply({ DRYDOCK_HEAP_GROWING_PERCENT: '50' })).toEqual({ policy: { percent: 50, source: 'setting' }, set: ['--heap-growing-percent=50'] });
    expect(apply({ DRYDOCK_HEAP_GROWING_PERCENT: '0' })).toEqual({ policy: { percent: null, source: 'setting' }, set: [] });
  });

  it("should leave the flag given on node's command line, in either spelling", () => {
    for (const arg of ['--heap-growing-percent=30', '--heap_growing_percent=30', '--heap-growing-percent']) {
      expect(apply({ DRYDOCK_HEAP_GROWING_PERCENT: '50' }, ['--enable-source-maps', arg])).toEqual({
        policy: { percent: null, source: 'command line' },
        set: [],
      });
    }
    // A flag that only starts alike is not it.
    expect(apply({}, ['--heap-growing-percentage=3']).set).toEqual(['--heap-growing-percent=100']);
  });

  it('should refuse a value that is not a whole number from 0 to 1000, naming the setting', () => {
    for (const value of ['-1', '1.5', 'fast', '1001', '100%']) {
      expect(() => heapGrowingPolicy({ DRYDOCK_HEAP_GROWING_PERCENT: value }, [])).toThrow(ConfigError);
    }
    expect(() => heapGrowingPolicy({ DRYDOCK_HEAP_GROWING_PERCENT: 'fast' }, [])).toThrow(
      `DRYDOCK_HEAP_GROWING_PERCENT must be a whole number from 0 to 1000 (0 leaves V8's own heap growing), got "fast".`,
    );
    expect(heapGrowingPolicy({ DRYDOCK_HEAP_GROWING_PERCENT: '1000' }, []).percent).toBe(1000);
  });
});
