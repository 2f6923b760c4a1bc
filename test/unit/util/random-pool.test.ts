import { describe, expect, it } from 'vitest';
import { RandomPool } from '#lib/util/random-pool.js';

describe('RandomPool', () => {
  it('hands out copies that a refill of the pool leaves unchanged', () => {
    const pool = new RandomPool(8);
    const first = pool.bytes(6);
    const kept = Buffer.from(first);
    const second = pool.bytes(6); // does not fit in what is left: the pool is refilled
    pool.bytes(8);
    expect(first).toEqual(kept);
    expect(second).toHaveLength(6);
  });

  it('draws every byte value, in bytes and byte alike', () => {
    const pool = new RandomPool(64);
    const seen = new Set<number>();
    for (let i = 0; i < 4_096; i++) seen.add(pool.byte());
    for (const b of pool.bytes(64)) seen.add(b);
    expect(seen.size).toBe(256);
  });

  it('gives different bytes on each draw, across refills', () => {
    const pool = new RandomPool(32);
    const draws = new Set(Array.from({ length: 200 }, () => pool.bytes(10).toString('hex')));
    expect(draws.size).toBe(200);
  });

  it('refuses a draw larger than the pool', () => {
    expect(() => new RandomPool(16).bytes(17)).toThrow(RangeError);
  });
});
