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
    const fromByte = new Set<number>();
    for (let i = 0; i < 4_096; i++) fromByte.add(pool.byte());
    const fromBytes = new Set<number>();
    for (let i = 0; i < 64; i++) for (const b of pool.bytes(64)) fromBytes.add(b);
    expect(fromByte.size).toBe(256);
    expect(fromBytes.size).toBe(256);
  });

  it('gives different bytes on each draw, across refills', () => {
    const pool = new RandomPool(32);
    const draws = new Set(Array.from({ length: 200 }, () => pool.bytes(10).toString('hex')));
    expect(draws.size).toBe(200);
  });

  it('refuses a draw it cannot hand out whole and fresh, and a pool that holds nothing', () => {
    const pool = new RandomPool(16);
    for (const n of [17, -1, 1.5, Number.NaN]) expect(() => pool.bytes(n)).toThrow(RangeError);
    for (const size of [0, -4, 2.5]) expect(() => new RandomPool(size)).toThrow(RangeError);
  });
});
