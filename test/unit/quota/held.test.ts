import { describe, expect, it } from 'vitest';
import { compactHeld, earliestHeld, fromLegacyHeld, heldFor, heldSlots } from '#lib/quota/index.js';

describe('held reservations', () => {
  const held = { members: { a: 3_000, b: 1_000 }, broadcastMs: 2_000, call: { slotMs: 500, personTimes: 2 } };

  it('lists every held slot and finds the earliest', () => {
    expect(heldSlots(held).sort()).toEqual([1_000, 2_000, 3_000, 500].sort());
    expect(earliestHeld(held)).toBe(500);
    expect(earliestHeld(undefined)).toBeUndefined();
  });

  it('keeps only the member slots of the members a part still sends to', () => {
    expect(heldFor(held, ['b', 'c'])).toEqual({ members: { b: 1_000 } });
    expect(heldFor(held, ['c'])).toEqual({});
  });

  it('leaves out empty fields, and is nothing when nothing is held', () => {
    expect(compactHeld({ members: {} })).toBeUndefined();
    expect(compactHeld({ members: {}, broadcastMs: 5 })).toEqual({ broadcastMs: 5 });
  });

  it('reads the one map older bodies carried, skipping keys it cannot read', () => {
    expect(fromLegacyHeld({ a: 1, '~broadcast': 2, '~app:3': 4, '~app:x': 5, b: 'no' })).toEqual({
      members: { a: 1 },
      broadcastMs: 2,
      call: { slotMs: 4, personTimes: 3 },
    });
    expect(fromLegacyHeld({})).toBeUndefined();
  });
});
