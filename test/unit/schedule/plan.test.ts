import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { planSchedule, releaseOf } from '#lib/schedule/index.js';

const MINUTE = 60_000;
const crowded = (t: number) => [0, 30].includes(Math.floor(t / MINUTE) % 60);

describe('releaseOf (the spread)', () => {
  it('releases within the spread after the due time, never before it and never in a :00 or :30 minute', () => {
    fc.assert(
      fc.property(
        fc.integer({ min: Date.parse('2026-01-01T00:00:00Z'), max: Date.parse('2027-01-01T00:00:00Z') }),
        fc.integer({ min: 1, max: 3_600 }),
        fc.string({ minLength: 1, maxLength: 30 }),
        (due, spreadSeconds, id) => {
          const release = releaseOf(due, spreadSeconds * 1000, id);
          expect(release).toBeGreaterThanOrEqual(due);
          expect(crowded(release)).toBe(false);
          // Within the spread plus the crowded minutes it skipped (at most two within an hour's spread, +1 margin).
          expect(release - due).toBeLessThan(spreadSeconds * 1000 + 3 * MINUTE);
        },
      ),
    );
  });

  it('spreads many messages due at one instant evenly over the window', () => {
    const due = Date.parse('2026-12-07T00:00:00Z'); // 08:00 in Shanghai: a crowded minute
    const releases = Array.from({ length: 2_000 }, (_, i) => releaseOf(due, 180_000, `msg_${i}`));
    // The crowded minute is skipped: the window starts at 00:01.
    expect(Math.min(...releases)).toBeGreaterThanOrEqual(due + MINUTE);
    expect(Math.max(...releases)).toBeLessThan(due + MINUTE + 180_000);
    const perMinute = [0, 1, 2].map(
      (m) => releases.filter((r) => Math.floor((r - due) / MINUTE) === m + 1).length,
    );
    for (const n of perMinute) expect(n).toBeGreaterThan(2_000 / 3 - 120);
  });

  it('gives one id the same release every time, and releases at the due time with no spread', () => {
    const due = Date.parse('2026-12-07T00:00:00Z');
    expect(releaseOf(due, 180_000, 'msg_a')).toBe(releaseOf(due, 180_000, 'msg_a'));
    expect(releaseOf(due, 0, 'msg_a')).toBe(due);
  });
});

describe('planSchedule', () => {
  const now = Date.parse('2026-12-06T15:00:00Z'); // 23:00 in Shanghai
  const quiet = [{ timeZone: 'Asia/Shanghai', start: '22:00', end: '08:00' }];

  it('sends at once what has no send_at, or one already past, outside quiet hours', () => {
    expect(planSchedule({ id: 'm', nowMs: now, spreadMs: 0 })).toBeUndefined();
    expect(planSchedule({ id: 'm', nowMs: now, sendAtMs: now - 1, spreadMs: 0 })).toBeUndefined();
  });

  it('schedules a send_at ahead for it, and a message inside quiet hours for their end', () => {
    expect(planSchedule({ id: 'm', nowMs: now, sendAtMs: now + MINUTE, spreadMs: 0 })).toEqual({
      dueAt: new Date(now + MINUTE).toISOString(),
      releaseAt: new Date(now + MINUTE).toISOString(),
      reason: 'send_at',
    });
    expect(planSchedule({ id: 'm', nowMs: now, quiet, spreadMs: 0 })).toMatchObject({
      dueAt: '2026-12-07T00:00:00.000Z',
      reason: 'quiet_hours',
    });
    // A send_at inside the window waits for its end too.
    expect(planSchedule({ id: 'm', nowMs: now, sendAtMs: now + MINUTE, quiet, spreadMs: 0 })).toMatchObject({
      dueAt: '2026-12-07T00:00:00.000Z',
      reason: 'quiet_hours',
    });
  });
});
