import { describe, expect, it } from 'vitest';
import { parseOffsetTime } from '#lib/util/index.js';

describe('parseOffsetTime (send_at)', () => {
  it.each([
    ['2026-12-07T09:00:00+08:00', '2026-12-07T01:00:00.000Z'],
    ['2026-12-07T01:00:00Z', '2026-12-07T01:00:00.000Z'],
    ['2026-12-07t01:00:00.250z', '2026-12-07T01:00:00.250Z'],
    ['2026-12-06T20:00:00-05:00', '2026-12-07T01:00:00.000Z'],
  ])('reads %s as %s', (text, expected) => {
    expect(new Date(parseOffsetTime(text) as number).toISOString()).toBe(expected);
  });

  it.each([
    '2026-12-07T09:00:00',
    '2026-12-07',
    'tomorrow 9am',
    '2026-02-30T09:00:00Z',
    '2026-13-01T09:00:00Z',
    '2026-12-07T24:00:00Z',
    '1733547600',
  ])('refuses %s (no offset, or no such time)', (text) => {
    expect(parseOffsetTime(text)).toBeUndefined();
  });
});
