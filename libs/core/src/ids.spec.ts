import { isId, newId } from './ids.js';

describe(newId.name, () => {
  it('should give well-formed ids that never repeat, across refills of its random pool', () => {
    // 20 random bytes an id from a 4 KiB pool: 1,000 ids refill it four times.
    const ids = Array.from({ length: 1000 }, () => newId('exe'));

    expect(ids.every((id) => isId(id, 'exe'))).toBe(true);
    // A pool not advanced, or not refilled when used up, would give the same ids again.
    expect(new Set(ids).size).toBe(ids.length);
  });
});
