import { withTimeout } from './with-timeout.js';

describe(withTimeout.name, () => {
  it('should give the value of a promise that settles in time', async () => {
    await expect(withTimeout(Promise.resolve('done'), 1_000, 'late')).resolves.toBe('done');
  });

  it('should give the fallback when the promise takes longer', async () => {
    await expect(withTimeout(new Promise<string>(() => undefined), 10, 'late')).resolves.toBe('late');
  });

  it('should give the fallback when the promise fails', async () => {
    await expect(withTimeout(Promise.reject(new Error('boom')), 1_000, 'failed')).resolves.toBe('failed');
  });
});
