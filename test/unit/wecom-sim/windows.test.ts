import { describe, expect, it } from 'vitest';
import { FixedWindowCounter } from '#local/wecom-sim/windows.js';

describe('FixedWindowCounter', () => {
  it('starts a new day at midnight China Standard Time (16:00 UTC) with an 8-hour offset', () => {
    const day = new FixedWindowCounter(86_400_000, 8 * 3_600_000);
    day.add('app', Date.parse('2026-12-01T15:59:59Z'), 5);

    expect(day.current('app', Date.parse('2026-12-01T15:59:59.999Z'))).toBe(5);
    expect(day.current('app', Date.parse('2026-12-01T16:00:00Z'))).toBe(0);
  });

  it('aligns to the epoch without an offset', () => {
    const minute = new FixedWindowCounter(60_000);
    minute.add('m', 119_999);

    expect(minute.current('m', 60_000)).toBe(1);
    expect(minute.current('m', 120_000)).toBe(0);
  });
});
