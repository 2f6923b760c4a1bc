import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QUOTA_DEFAULTS } from '#lib/config/index.js';
import { lateBudgetMs, latenessOf, WECOM_WINDOWS } from '#lib/quota/index.js';

/** The definition, step by step: every multiple of every pace up to slack + 1, the first whose count passes. */
function lateBudgetByListing(pacesMs: readonly number[], slack: number): number {
  const paces = pacesMs.filter((p) => Number.isFinite(p) && p > 0);
  const over = (late: number) => paces.reduce((n, p) => n + Math.floor(late / p) + 1, 0) > slack;
  if (paces.length === 0 || over(0)) return 0;
  const steps = [...new Set(paces.flatMap((p) => Array.from({ length: slack + 1 }, (_, k) => (k + 1) * p)))];
  const first = steps.sort((a, b) => a - b).find(over);
  return first === undefined ? Number.POSITIVE_INFINITY : first - 1;
}

describe('lateBudgetMs', () => {
  it('is the lateness just before the first multiple of a pace at which the pools could pass the slack', () => {
    fc.assert(
      fc.property(
        fc.array(
          fc.oneof(fc.integer({ min: 1, max: 20_000 }), fc.double({ min: 0.5, max: 20_000, noNaN: true })),
          {
            maxLength: 4,
          },
        ),
        fc.integer({ min: 0, max: 300 }),
        (paces, slack) => {
          expect(lateBudgetMs(paces, slack)).toBe(lateBudgetByListing(paces, slack));
        },
      ),
      { numRuns: 500 },
    );
  });

  it('gives an app allowed a million calls a minute the same budget as listing every step would', () => {
    // The sender computes this for every send; the listing took ~300 ms of CPU for such an app.
    const quota = { ...QUOTA_DEFAULTS, perMinute: 1_000_000 };
    expect(latenessOf({ quota, broadcastShare: 0 }, WECOM_WINDOWS, 5_000).latenessMs).toBeGreaterThan(0);
    const pace = WECOM_WINDOWS.minuteMs / (quota.perMinute * (1 - quota.safetyMargin));
    expect(lateBudgetMs([pace, pace], 200_000)).toBe(lateBudgetByListing([pace, pace], 200_000));
  });
});
