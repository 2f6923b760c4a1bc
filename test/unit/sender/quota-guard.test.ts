import { describe, expect, it } from 'vitest';
import { QUOTA_DEFAULTS, type QuotaConfig } from '#lib/config/index.js';
import {
  effectiveLimit,
  type QuotaDecision,
  type QuotaDemand,
  QuotaGuard,
  WECOM_WINDOWS,
} from '#lib/sender/index.js';
import { fakeClock } from '#test/helpers/unit-clock.js';
import { InMemoryQuotaStore } from '#test/helpers/unit-quota-store.js';

/** 08:00:07 UTC = 16:00:07 in China: WeCom's day ends at 16:00 UTC. */
const START = Date.parse('2026-12-01T08:00:07Z');
const MINUTE_END = Date.parse('2026-12-01T08:01:00Z');
const HOUR_END = Date.parse('2026-12-01T09:00:00Z');
const DAY_END = Date.parse('2026-12-02T16:00:00Z') - 86_400_000;
const MINUTE = Math.floor(START / 60_000);

const quota = (overrides: Partial<QuotaConfig> = {}): QuotaConfig => ({ ...QUOTA_DEFAULTS, ...overrides });

const demand = (overrides: Partial<QuotaDemand> = {}): QuotaDemand => ({
  app: 'ops',
  quota: quota(),
  priority: 'high',
  members: [],
  personTimes: 1,
  ...overrides,
});

const granted = (decisions: QuotaDecision[]) => decisions.filter((d) => d.ok).length;

/** Acquires one by one until the guard refuses; returns how many were granted and the refusal. */
async function fillUntilRefused(guard: QuotaGuard, d: QuotaDemand, max = 100_000) {
  for (let n = 0; n < max; n++) {
    const decision = await guard.acquire(d);
    if (!decision.ok) return { granted: n, refusal: decision };
  }
  throw new Error(`still granting after ${max}`);
}

describe('effectiveLimit', () => {
  it('keeps (1 − safetyMargin) of the WeCom limit for high and normalShare of that for normal', () => {
    const q = quota({ safetyMargin: 0.2, normalShare: 0.8 });

    expect(effectiveLimit(10_000, q, 'high')).toBe(8_000);
    expect(effectiveLimit(10_000, q, 'normal')).toBe(6_400);
    expect(effectiveLimit(30, q, 'high')).toBe(24);
    expect(effectiveLimit(30, q, 'normal')).toBe(19);
  });

  it('rounds down, so the gateway never exceeds the fraction it promised', () => {
    const q = quota({ safetyMargin: 0.1, normalShare: 0.5 });

    expect(effectiveLimit(1_000, q, 'high')).toBe(900);
    expect(effectiveLimit(1_000, q, 'normal')).toBe(450);
    expect(effectiveLimit(7, q, 'high')).toBe(6);
  });

  it('never goes below 1', () => {
    expect(effectiveLimit(1, quota({ safetyMargin: 0.9, normalShare: 0.1 }), 'normal')).toBe(1);
  });

  it('uses the whole limit with no margin and a full share', () => {
    const q = quota({ safetyMargin: 0, normalShare: 1 });

    expect(effectiveLimit(30, q, 'high')).toBe(30);
    expect(effectiveLimit(30, q, 'normal')).toBe(30);
  });
});

describe('QuotaGuard', () => {
  it('never grants more than the effective per-minute limit across 4 containers hammering at once', async () => {
    const clock = fakeClock(START);
    const store = new InMemoryQuotaStore();
    const guards = Array.from({ length: 4 }, () => new QuotaGuard(store, WECOM_WINDOWS, clock.now));
    const d = demand({ quota: quota({ perMinute: 100 }) });

    const decisions = await Promise.all(
      guards.flatMap((g) => Array.from({ length: 100 }, () => g.acquire(d))),
    );

    expect(granted(decisions)).toBe(80);
    expect(store.used('ops', 'app-minute', MINUTE)).toBe(80);
  });

  it('never lets the store counter pass the effective limit when blocks are reserved concurrently', async () => {
    const clock = fakeClock(START);
    const store = new InMemoryQuotaStore();
    const guards = Array.from({ length: 4 }, () => new QuotaGuard(store, WECOM_WINDOWS, clock.now));
    const d = demand({ quota: quota({ perMinute: 2_500 }) });

    const decisions = await Promise.all(
      guards.flatMap((g) => Array.from({ length: 600 }, () => g.acquire(d))),
    );

    expect(granted(decisions)).toBeLessThanOrEqual(2_000);
    expect(store.used('ops', 'app-minute', MINUTE)).toBeLessThanOrEqual(2_000);
  });

  it('lets high use the full effective limit while normal stops at its share', async () => {
    const clock = fakeClock(START);
    const store = new InMemoryQuotaStore();
    const guard = new QuotaGuard(store, WECOM_WINDOWS, clock.now);
    const q = quota({ perMinute: 100 });

    const normal = await fillUntilRefused(guard, demand({ quota: q, priority: 'normal' }));
    const high = await fillUntilRefused(guard, demand({ quota: q, priority: 'high' }));

    expect(normal.granted).toBe(64);
    expect(high.granted).toBe(80 - 64);
  });

  it('refuses with the end of the minute as retryAtMs once the minute is used up', async () => {
    const clock = fakeClock(START);
    const guard = new QuotaGuard(new InMemoryQuotaStore(), WECOM_WINDOWS, clock.now);

    const { granted: n, refusal } = await fillUntilRefused(
      guard,
      demand({ quota: quota({ perMinute: 100 }) }),
    );

    expect(n).toBe(80);
    expect(refusal).toEqual({ ok: false, scope: 'app-minute', retryAtMs: MINUTE_END });
  });

  it('grants again in the next minute', async () => {
    const clock = fakeClock(START);
    const guard = new QuotaGuard(new InMemoryQuotaStore(), WECOM_WINDOWS, clock.now);
    const d = demand({ quota: quota({ perMinute: 100 }) });
    await fillUntilRefused(guard, d);

    clock.advance(MINUTE_END - START);

    expect(await guard.acquire(d)).toEqual({ ok: true });
  });

  it('refuses with the end of WeCom’s day (midnight in China) when the daily person-times run out', async () => {
    const clock = fakeClock(START);
    const guard = new QuotaGuard(new InMemoryQuotaStore(), WECOM_WINDOWS, clock.now);
    const d = demand({ quota: quota({ perDay: 10 }), personTimes: 5 });

    const first = await guard.acquire(d);
    const second = await guard.acquire(d);

    expect(first).toEqual({ ok: true });
    expect(second).toEqual({ ok: false, scope: 'app-day', retryAtMs: DAY_END });
  });

  it('gives back the app-level reservations of a message a member limit refused', async () => {
    const clock = fakeClock(START);
    const guard = new QuotaGuard(new InMemoryQuotaStore(), WECOM_WINDOWS, clock.now);
    const q = quota({ perMinute: 100 });
    const toAlice = await fillUntilRefused(guard, demand({ quota: q, members: ['alice'] }));

    let others = 0;
    for (; ; others++) if (!(await guard.acquire(demand({ quota: q, members: [`user${others}`] }))).ok) break;

    expect(toAlice.granted).toBe(24);
    expect(toAlice.refusal).toEqual({ ok: false, scope: 'member-minute', retryAtMs: MINUTE_END });
    expect(toAlice.granted + others).toBe(80);
  });

  it('gives back the member reservations already taken when another member is refused', async () => {
    const clock = fakeClock(START);
    const store = new InMemoryQuotaStore();
    const guard = new QuotaGuard(store, WECOM_WINDOWS, clock.now);
    await fillUntilRefused(guard, demand({ members: ['alice'] }));
    const hour = Math.floor(START / 3_600_000);

    const decision = await guard.acquire(demand({ members: ['bob', 'alice', 'carol'] }));

    expect(decision).toMatchObject({ ok: false, scope: 'member-minute' });
    expect(store.memberUsage('ops', 'bob', hour).hour).toBe(0);
    expect(store.memberUsage('ops', 'carol', hour).hour).toBe(0);
  });

  it("reports 'member-hour' with the end of the hour when a member's hour is full", async () => {
    const clock = fakeClock(START);
    const guard = new QuotaGuard(new InMemoryQuotaStore(), WECOM_WINDOWS, clock.now);
    const d = demand({ quota: quota({ perMemberPerHour: 10 }), members: ['alice'] });

    const { granted: n, refusal } = await fillUntilRefused(guard, d);

    expect(n).toBe(8);
    expect(refusal).toEqual({ ok: false, scope: 'member-hour', retryAtMs: HOUR_END });
  });

  it('counts a member in the next minute of the same hour against the hour, not the minute', async () => {
    const clock = fakeClock(START);
    const guard = new QuotaGuard(new InMemoryQuotaStore(), WECOM_WINDOWS, clock.now);
    const d = demand({ quota: quota({ perMemberPerHour: 40 }), members: ['alice'] });
    const firstMinute = await fillUntilRefused(guard, d);

    clock.advance(MINUTE_END - START);
    const secondMinute = await fillUntilRefused(guard, d);

    expect(firstMinute).toMatchObject({ granted: 24, refusal: { scope: 'member-minute' } });
    expect(secondMinute).toMatchObject({ granted: 32 - 24, refusal: { scope: 'member-hour' } });
  });

  it('reserves app quota in blocks: fewer than 0.2 store calls per message at a large limit', async () => {
    const clock = fakeClock(START);
    const store = new InMemoryQuotaStore();
    const guard = new QuotaGuard(store, WECOM_WINDOWS, clock.now);
    const d = demand({ quota: quota({ perMinute: 10_000 }) });

    for (let i = 0; i < 1_000; i++) await guard.acquire(d);

    expect(store.used('ops', 'app-minute', MINUTE)).toBeGreaterThanOrEqual(1_000);
    expect(store.total() / 1_000).toBeLessThan(0.2);
  });

  it('costs one member request per recipient on top of the app blocks', async () => {
    const clock = fakeClock(START);
    const store = new InMemoryQuotaStore();
    const guard = new QuotaGuard(store, WECOM_WINDOWS, clock.now);

    await guard.acquire(demand({ members: ['a', 'b', 'c'], personTimes: 3 }));

    expect(store.calls.reserveMember).toBe(3);
    expect(store.calls.reserve).toBe(3);
  });
});
