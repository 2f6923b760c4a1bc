import { describe, expect, it } from 'vitest';
import {
  classifyDelivery,
  DEFAULT_WEBHOOK_RETRY,
  type DeliveryResult,
  nextRetryDelaySeconds,
  parseRetryAfter,
} from '#lib/webhooks/index.js';

/** A seeded generator (mulberry32), so the simulated schedules are the same on every run. */
function seeded(seed: number): () => number {
  let a = seed;
  return () => {
    a = (a + 0x6d2b79f5) | 0;
    let t = Math.imul(a ^ (a >>> 15), 1 | a);
    t = (t + Math.imul(t ^ (t >>> 7), 61 | t)) ^ t;
    return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
  };
}

/** Plays one webhook that never succeeds: attempts made and the age of the last one. */
function playSchedule(random: () => number) {
  let attempts = 1;
  let age = 0;
  let longestWait = 0;
  for (;;) {
    const delay = nextRetryDelaySeconds(attempts, age, { random });
    if (delay === undefined) return { attempts, lastAttemptAge: age, longestWait };
    longestWait = Math.max(longestWait, delay);
    age += delay;
    attempts++;
  }
}

describe('nextRetryDelaySeconds', () => {
  it('doubles the ceiling from 30 s up to the 2 h cap (top of the jitter range)', () => {
    const top = () => 0.999_999;
    const delays = [1, 2, 3, 4, 5, 6, 7, 8, 9, 10].map((n) => nextRetryDelaySeconds(n, 0, { random: top }));
    expect(delays).toEqual([30, 60, 120, 240, 480, 960, 1920, 3840, 7200, 7200]);
  });

  it('draws anywhere from 1 s up to the ceiling (full jitter)', () => {
    expect(nextRetryDelaySeconds(5, 0, { random: () => 0 })).toBe(1);
    expect(nextRetryDelaySeconds(5, 0, { random: () => 0.5 })).toBe(240);
  });

  it('keeps retrying until 24 h after the first attempt, then gives up', () => {
    const day = DEFAULT_WEBHOOK_RETRY.maxAgeSeconds;
    expect(nextRetryDelaySeconds(30, day - 1, { random: () => 0.5 })).toBeGreaterThan(0);
    expect(nextRetryDelaySeconds(30, day)).toBeUndefined();
    expect(nextRetryDelaySeconds(DEFAULT_WEBHOOK_RETRY.maxAttempts, 0)).toBeUndefined();
  });

  it('waits at least what Retry-After asks, up to the cap', () => {
    expect(nextRetryDelaySeconds(1, 0, { random: () => 0, retryAfterSeconds: 120 })).toBe(120);
    expect(nextRetryDelaySeconds(1, 0, { random: () => 0, retryAfterSeconds: 86_400 })).toBe(7200);
  });

  it('covers at least 24 h in every one of 10,000 simulated schedules, in 24–50 attempts', () => {
    const random = seeded(42);
    const runs = Array.from({ length: 10_000 }, () => playSchedule(random));
    const attempts = runs.map((r) => r.attempts).sort((a, b) => a - b);
    expect(Math.min(...runs.map((r) => r.lastAttemptAge))).toBeGreaterThanOrEqual(24 * 3600);
    expect(Math.max(...runs.map((r) => r.lastAttemptAge))).toBeLessThanOrEqual(26 * 3600);
    expect(Math.max(...runs.map((r) => r.longestWait))).toBeLessThanOrEqual(7200);
    // The figures the TSDoc quotes: median 32, 98 % within 27–40, never near maxAttempts.
    expect(attempts[5_000]).toBe(32);
    expect([attempts[100], attempts[9_900]]).toEqual([27, 40]);
    expect(attempts.at(-1)).toBeLessThan(50);
  });
});

describe('classifyDelivery', () => {
  const response = (status: number, extra: Partial<DeliveryResult> = {}): DeliveryResult =>
    ({ kind: 'response', status, latencyMs: 5, excerpt: '', ...extra }) as DeliveryResult;

  it.each([
    [200, 'delivered'],
    [204, 'delivered'],
    [299, 'delivered'],
    [410, 'stop'],
    [301, 'retry'],
    [302, 'retry'],
    [400, 'retry'],
    [401, 'retry'],
    [404, 'retry'],
    [408, 'retry'],
    [429, 'retry'],
    [500, 'retry'],
    [502, 'retry'],
    [503, 'retry'],
  ])('HTTP %i → %s', (status, outcome) => {
    expect(classifyDelivery(response(status)).outcome).toBe(outcome);
  });

  it('passes Retry-After on with a retry', () => {
    expect(classifyDelivery(response(429, { retryAfterSeconds: 30 }))).toEqual({
      outcome: 'retry',
      reason: 'HTTP 429',
      retryAfterSeconds: 30,
    });
  });

  it('stops on an SSRF refusal and retries network failures', () => {
    expect(classifyDelivery({ kind: 'refused', reason: 'private', latencyMs: 1 }).outcome).toBe('stop');
    for (const code of ['ECONNREFUSED', 'UND_ERR_HEADERS_TIMEOUT', 'lookup_unavailable']) {
      expect(classifyDelivery({ kind: 'failed', code, message: '', latencyMs: 1 })).toEqual({
        outcome: 'retry',
        reason: code,
      });
    }
  });
});

describe('parseRetryAfter', () => {
  const now = Date.parse('2026-12-01T08:00:00Z');
  it.each([
    ['120', 120],
    [' 0 ', 0],
    ['Tue, 01 Dec 2026 08:01:30 GMT', 90],
    ['Tue, 01 Dec 2026 07:00:00 GMT', 0],
    ['soon', undefined],
    ['-5', undefined],
    [undefined, undefined],
  ])('reads %j as %j seconds', (value, seconds) => {
    expect(parseRetryAfter(value, now)).toBe(seconds);
  });
});
