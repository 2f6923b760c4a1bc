import { describe, expect, it } from 'vitest';
import { isPlainObject } from '#lib/util/index.js';

describe('isPlainObject', () => {
  it('accepts JSON objects only', () => {
    expect(isPlainObject(JSON.parse('{"a":1}'))).toBe(true);
    expect(isPlainObject(Object.create(null))).toBe(true);
    for (const value of [null, undefined, [], 'x', 1, new Date(), new Map()]) {
      expect(isPlainObject(value), String(value)).toBe(false);
    }
  });
});
