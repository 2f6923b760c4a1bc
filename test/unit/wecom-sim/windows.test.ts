import { describe, expect, it } from 'vitest';
import { WindowLog } from '#local/wecom-sim/windows.js';

const FIXED = { windows: 'fixed', windowOffsetMs: 0 } as const;
const ROLLING = { windows: 'rolling', windowOffsetMs: 0 } as const;

describe('WindowLog', () => {
  it('starts a new fixed day at midnight China Standard Time (16:00 UTC) when aligned 8 hours back', () => {
    const day = new WindowLog(86_400_000, -8 * 3_600_000);
    day.add('app', Date.parse('2026-12-01T15:59:59Z'), 5);

    expect(day.used('app', Date.parse('2026-12-01T15:59:59.999Z'), FIXED)).toBe(5);
    expect(day.used('app', Date.parse('2026-12-01T16:00:00Z'), FIXED)).toBe(0);
  });

  it('aligns fixed windows to the epoch without an offset', () => {
    const minute = new WindowLog(60_000);
    minute.add('m', 119_999);

    expect(minute.used('m', 60_000 + 59_999, FIXED)).toBe(1);
    expect(minute.used('m', 120_000, FIXED)).toBe(0);
  });

  it('moves fixed window starts by the reading offset', () => {
    const minute = new WindowLog(60_000);
    const offset = { windows: 'fixed', windowOffsetMs: 30_000 } as const;
    minute.add('m', 100_000);

    expect(minute.windowStart(100_000, offset)).toBe(90_000);
    expect(minute.used('m', 149_999, offset)).toBe(1);
    expect(minute.used('m', 150_000, offset)).toBe(0);
  });

  it('counts everything within the last window length when rolling, across fixed boundaries', () => {
    const minute = new WindowLog(60_000);
    minute.add('m', 59_000, 24);
    minute.add('m', 60_000, 24);

    expect(minute.used('m', 60_000, FIXED)).toBe(24);
    expect(minute.used('m', 60_000, ROLLING)).toBe(48);
    // A send exactly one window length later no longer shares a window with the first one.
    expect(minute.used('m', 119_000, ROLLING)).toBe(24);
    expect(minute.used('m', 120_000, ROLLING)).toBe(0);
  });

  it('keeps keys apart and forgets everything on clear', () => {
    const hour = new WindowLog(3_600_000);
    hour.add('a', 1000, 3);
    hour.add('b', 2000);

    expect([hour.used('a', 3000, ROLLING), hour.used('b', 3000, ROLLING)]).toEqual([3, 1]);
    hour.clear();
    expect(hour.used('a', 3000, ROLLING)).toBe(0);
  });

  it('stays correct over many entries as old ones expire', () => {
    const minute = new WindowLog(1000);
    for (let t = 0; t < 10_000; t += 10) minute.add('m', t);

    // Entries every 10 ms: a rolling second ending at 9990 holds (8990, 9990] = 100 entries.
    expect(minute.used('m', 9990, ROLLING)).toBe(100);
    expect(minute.used('m', 9990, FIXED)).toBe(100);
    expect(minute.used('m', 9_500, FIXED)).toBe(100);
  });
});
