import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { DEFAULT_RETRY, fullJitterSeconds } from '#lib/sender/index.js';

describe('fullJitterSeconds', () => {
  it('waits at least 1 s even when the random draw is 0', () => {
    expect(fullJitterSeconds(1, DEFAULT_RETRY, () => 0)).toBe(1);
  });

  it('reaches base × 2^(attempt − 1) at the top of the draw', () => {
    const policy = { baseSeconds: 5, capSeconds: 600 };
    const top = () => 0.999_999;

    expect([1, 2, 3, 4].map((n) => fullJitterSeconds(n, policy, top))).toEqual([5, 10, 20, 40]);
  });

  it('never exceeds the cap, however many attempts', () => {
    expect(fullJitterSeconds(40, { baseSeconds: 5, capSeconds: 600 }, () => 0.999_999)).toBe(600);
  });

  it('is a whole number within [1, min(cap, base·2^(n−1))] for any attempt and draw', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: 1, max: 60 }),
        fc.double({ min: 0, max: 1, maxExcluded: true, noNaN: true }),
        fc.integer({ min: 1, max: 30 }),
        fc.integer({ min: 1, max: 3_600 }),
        (attempt, draw, base, cap) => {
          const seconds = fullJitterSeconds(attempt, { baseSeconds: base, capSeconds: cap }, () => draw);
          const ceiling = Math.min(cap, base * 2 ** (attempt - 1));

          expect(Number.isInteger(seconds)).toBe(true);
          expect(seconds).toBeGreaterThanOrEqual(1);
          expect(seconds).toBeLessThanOrEqual(ceiling);
        },
      ),
    );
  });
});
