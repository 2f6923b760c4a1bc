import { describe, expect, it } from 'vitest';
import { newMessageId } from '#lib/ingest/ids.js';

describe('newMessageId', () => {
  it('makes distinct, time-ordered ULIDs with uniformly drawn random characters across pool refills', () => {
    // 2,000 ids draw 32,000 random bytes: the 4 KB pool is refilled several times.
    const ids = Array.from({ length: 2_000 }, () => newMessageId());
    expect(new Set(ids).size).toBe(ids.length);
    for (const id of ids) expect(id).toMatch(/^msg_[0-9A-HJKMNP-TV-Z]{26}$/);
    // The first 10 characters are the timestamp: never decreasing in the order the ids were made.
    const times = ids.map((id) => id.slice(4, 14));
    expect(times).toEqual([...times].sort());
    const counts = new Map<string, number>();
    for (const id of ids) for (const c of id.slice(14)) counts.set(c, (counts.get(c) ?? 0) + 1);
    // 32,000 characters over ulid's 32: 1,000 each expected, σ ≈ 31; a biased or stuck generator falls far outside.
    expect(counts.size).toBe(32);
    for (const n of counts.values()) {
      expect(n).toBeGreaterThan(800);
      expect(n).toBeLessThan(1_200);
    }
  });
});
