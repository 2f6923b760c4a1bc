import { describe, expect, it } from 'vitest';
import { timeOption } from '#cli/commands/messages.js';

describe('messages list --since/--until', () => {
  const parse = timeOption(() => Date.parse('2026-12-01T12:00:00Z'));

  it.each([
    ['30s', '2026-12-01T11:59:30.000Z'],
    ['30m', '2026-12-01T11:30:00.000Z'],
    ['2h', '2026-12-01T10:00:00.000Z'],
    ['1d', '2026-11-30T12:00:00.000Z'],
  ])('reads %s as that long ago', (value, iso) => {
    expect(parse(value)).toBe(iso);
  });

  it('passes anything else on for the gateway to check (its 400 names the parameter)', () => {
    expect(parse('2026-12-01T08:00:00+08:00')).toBe('2026-12-01T08:00:00+08:00');
    expect(parse('yesterday')).toBe('yesterday');
  });
});
