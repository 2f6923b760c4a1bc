import { describe, expect, it } from 'vitest';
import { instantOf, type QuietHoursRule, quietUntil, rulesFor } from '#lib/schedule/index.js';

const at = (iso: string) => Date.parse(iso);
const iso = (ms: number) => new Date(ms).toISOString();
const SHANGHAI: QuietHoursRule = { timeZone: 'Asia/Shanghai', start: '22:00', end: '08:00' };

describe('quietUntil', () => {
  it('moves a time inside an overnight window to its end, the next morning', () => {
    // 23:00 Shanghai (UTC+8) on the 6th → 08:00 on the 7th.
    expect(iso(quietUntil([SHANGHAI], at('2026-12-06T15:00:00Z')))).toBe('2026-12-07T00:00:00.000Z');
    // 03:00 on the 7th: the window began the day before.
    expect(iso(quietUntil([SHANGHAI], at('2026-12-06T19:00:00Z')))).toBe('2026-12-07T00:00:00.000Z');
  });

  it('leaves a time outside the window, and the end itself, as it is', () => {
    expect(quietUntil([SHANGHAI], at('2026-12-07T04:00:00Z'))).toBe(at('2026-12-07T04:00:00Z'));
    expect(quietUntil([SHANGHAI], at('2026-12-07T00:00:00Z'))).toBe(at('2026-12-07T00:00:00Z'));
    expect(quietUntil([SHANGHAI], at('2026-12-06T13:59:59Z'))).toBe(at('2026-12-06T13:59:59Z'));
  });

  it('counts days as the days a window starts on', () => {
    // Only Friday nights: Friday 2026-12-04 23:00 is held to Saturday 08:00, Saturday 23:00 is not held.
    const fridays: QuietHoursRule = { ...SHANGHAI, days: ['fri'] };
    expect(iso(quietUntil([fridays], at('2026-12-04T15:00:00Z')))).toBe('2026-12-05T00:00:00.000Z');
    expect(quietUntil([fridays], at('2026-12-05T15:00:00Z'))).toBe(at('2026-12-05T15:00:00Z'));
  });

  it('follows daylight saving: the same wall-clock end on either side of a change', () => {
    const berlin: QuietHoursRule = { timeZone: 'Europe/Berlin', start: '22:00', end: '07:00' };
    // Night of 28/29 March 2026: clocks go from 02:00 CET to 03:00 CEST; 07:00 CEST is 05:00 UTC.
    expect(iso(quietUntil([berlin], at('2026-03-28T23:30:00Z')))).toBe('2026-03-29T05:00:00.000Z');
    // Night of 24/25 October 2026: back from CEST to CET; 07:00 CET is 06:00 UTC.
    expect(iso(quietUntil([berlin], at('2026-10-24T23:30:00Z')))).toBe('2026-10-25T06:00:00.000Z');
  });

  it('reads a wall time the clocks skip as after the gap, and one they repeat as the first', () => {
    // 02:30 does not exist in Berlin on 29 March 2026: it lands at 03:30 CEST (01:30 UTC).
    expect(iso(instantOf({ year: 2026, month: 3, day: 29 }, 150, 'Europe/Berlin'))).toBe(
      '2026-03-29T01:30:00.000Z',
    );
    // 02:30 happens twice on 25 October 2026: the first, in CEST (00:30 UTC).
    expect(iso(instantOf({ year: 2026, month: 10, day: 25 }, 150, 'Europe/Berlin'))).toBe(
      '2026-10-25T00:30:00.000Z',
    );
  });

  it('chains windows of several rules until a time is outside all of them', () => {
    const evening: QuietHoursRule = { timeZone: 'UTC', start: '18:00', end: '20:00' };
    const night: QuietHoursRule = { timeZone: 'UTC', start: '19:30', end: '23:00' };
    expect(iso(quietUntil([evening, night], at('2026-12-06T18:30:00Z')))).toBe('2026-12-06T23:00:00.000Z');
  });

  it('treats a window whose end equals its start as the whole day', () => {
    const allDay: QuietHoursRule = { timeZone: 'UTC', start: '00:00', end: '00:00', days: ['sun'] };
    // Sunday 2026-12-06 12:00 → Monday 00:00.
    expect(iso(quietUntil([allDay], at('2026-12-06T12:00:00Z')))).toBe('2026-12-07T00:00:00.000Z');
  });
});

describe('rulesFor', () => {
  const message = (priority: 'high' | 'normal', touser: string[] = ['alice']) => ({
    priority,
    recipients: { touser, toparty: [], totag: [] },
  });

  it('holds normal messages by default and lets high ones pass', () => {
    expect(rulesFor([SHANGHAI], message('normal'))).toEqual([SHANGHAI]);
    expect(rulesFor([SHANGHAI], message('high'))).toEqual([]);
    const all: QuietHoursRule = { ...SHANGHAI, priorities: ['high', 'normal'] };
    expect(rulesFor([all], message('high'))).toEqual([all]);
  });

  it('applies a rule with recipients to messages that name one of them, userids case-folded', () => {
    const parents: QuietHoursRule = { ...SHANGHAI, end: '09:00', recipients: { touser: ['Mum'] } };
    expect(rulesFor([parents], message('normal', ['bob', 'mum']))).toEqual([parents]);
    expect(rulesFor([parents], message('normal', ['bob']))).toEqual([]);
  });
});
