import fc from 'fast-check';
import { describe, expect, it } from 'vitest';
import { QUOTA_DEFAULTS, type QuotaConfig } from '#lib/config/index.js';
import {
  applySlot,
  bestSlot,
  bestSlots,
  blindSlot,
  bucketMsOf,
  type CounterSpec,
  effectiveLimit,
  emptyPool,
  grantedSlot,
  memberSpec,
  type Pool,
  type PoolState,
  personTimesSpec,
  planFits,
  type SlotPlan,
  WECOM_WINDOWS,
} from '#lib/quota/index.js';
import { maxInRollingWindow } from '#local/harness/windows.js';

const T0 = Date.parse('2026-12-01T07:59:31.250Z');
const W = WECOM_WINDOWS;

interface Unit {
  at: number;
  pool: Pool;
  priority: 'high' | 'normal';
  request: number;
}

const unitsOf = (plan: SlotPlan, spec: CounterSpec, priority: 'high' | 'normal', request: number): Unit[] =>
  Array.from({ length: plan.amount }, (_, i) => ({
    at: plan.slotMs + i * (spec.pools[plan.pool].paceMs ?? 0),
    pool: plan.pool,
    priority,
    request,
  }));

const quotaArb = fc.record({
  perMemberPerMinute: fc.integer({ min: 1, max: 30 }),
  perMemberPerHour: fc.oneof(fc.integer({ min: 1, max: 60 }), fc.integer({ min: 1, max: 1000 })),
  perDay: fc.integer({ min: 1, max: 5000 }),
  safetyMargin: fc.double({ min: 0, max: 0.5, noNaN: true }),
  normalShare: fc.double({ min: 0.1, max: 1, noNaN: true }),
});
const quotaOf = (q: Partial<QuotaConfig>): QuotaConfig => ({ ...QUOTA_DEFAULTS, ...q });

/** Arrival patterns: bursts (gap 0), trickles and idle stretches, both lanes, small blocks, some wanted later. */
const requestArb = fc.record({
  gapMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 3_000 }), fc.integer({ min: 0, max: 400_000 })),
  priority: fc.constantFrom<'high' | 'normal'>('high', 'normal'),
  amount: fc.oneof(fc.constant(1), fc.integer({ min: 1, max: 4 })),
  delayMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 90_000 })),
});

/** Plays requests against one counter, one writer; returns the units granted and the plans, in arrival order. */
function play(spec: CounterSpec, requests: readonly RequestLike[]) {
  let states: Record<Pool, PoolState> = { n: emptyPool(), h: emptyPool() };
  let now = T0;
  const units: Unit[] = [];
  const plans: (SlotPlan | undefined)[] = [];
  requests.forEach((r, i) => {
    now += r.gapMs;
    const plan = bestSlot(states, spec, r.priority, {
      amount: r.amount,
      notBeforeMs: now + r.delayMs,
      nowMs: now,
    });
    plans.push(plan);
    if (!plan) return;
    expect(plan.slotMs).toBeGreaterThanOrEqual(now + r.delayMs);
    states = { ...states, [plan.pool]: applySlot(states[plan.pool], plan) };
    units.push(...unitsOf(plan, spec, r.priority, i));
  });
  return { units, plans };
}

interface RequestLike {
  gapMs: number;
  priority: 'high' | 'normal';
  amount: number;
  delayMs: number;
}

describe('send slots (lib/quota)', () => {
  it('never puts more than the allowed count in any rolling minute or hour, whatever the arrivals', () => {
    fc.assert(
      fc.property(quotaArb, fc.array(requestArb, { maxLength: 250 }), (q, requests) => {
        const quota = quotaOf(q);
        const spec = memberSpec(quota, W);
        const { units } = play(spec, requests);
        const times = (pred: (u: Unit) => boolean) => units.filter(pred).map((u) => u.at);

        // Everything together: the count the gateway allows itself; normal alone: its share.
        const allMinute = effectiveLimit(quota.perMemberPerMinute, quota, 'high');
        const normalMinute = effectiveLimit(quota.perMemberPerMinute, quota, 'normal');
        expect(
          maxInRollingWindow(
            times(() => true),
            W.minuteMs,
          ),
        ).toBeLessThanOrEqual(allMinute);
        expect(
          maxInRollingWindow(
            times((u) => u.priority === 'normal'),
            W.minuteMs,
          ),
        ).toBeLessThanOrEqual(normalMinute);
        const allHour = effectiveLimit(quota.perMemberPerHour, quota, 'high');
        const normalHour = effectiveLimit(quota.perMemberPerHour, quota, 'normal');
        expect(
          maxInRollingWindow(
            times(() => true),
            W.hourMs,
          ),
        ).toBeLessThanOrEqual(allHour);
        expect(
          maxInRollingWindow(
            times((u) => u.priority === 'normal'),
            W.hourMs,
          ),
        ).toBeLessThanOrEqual(normalHour);
      }),
      { numRuns: 300 },
    );
  });

  it('keeps WeCom’s own limits when sends reach WeCom late, up to what the margin absorbs', () => {
    fc.assert(
      fc.property(
        quotaArb,
        fc.array(requestArb, { maxLength: 200 }),
        fc.array(fc.double({ min: 0, max: 1, noNaN: true }), { minLength: 1000, maxLength: 1000 }),
        (q, requests, lateness) => {
          const quota = quotaOf(q);
          const spec = memberSpec(quota, W);
          const { units } = play(spec, requests);
          // Minute: a pool's sends may be late by (WeCom's limit − the allowed count) × its pace; the hour: by one
          // bucket (the log's padding).
          const allMinute = effectiveLimit(quota.perMemberPerMinute, quota, 'high');
          const slack = quota.perMemberPerMinute - allMinute;
          const minPace = Math.min(spec.pools.n.paceMs ?? Infinity, spec.pools.h.paceMs ?? Infinity);
          const late = (u: Unit, i: number, max: number) => u.at + (lateness[i % 1000] as number) * max;
          const minuteTimes = units.map((u, i) => late(u, i, slack * minPace));
          const hourTimes = units.map((u, i) => late(u, i, bucketMsOf(spec)));

          expect(maxInRollingWindow(minuteTimes, W.minuteMs)).toBeLessThanOrEqual(quota.perMemberPerMinute);
          expect(maxInRollingWindow(hourTimes, W.hourMs)).toBeLessThanOrEqual(
            effectiveLimit(quota.perMemberPerHour, quota, 'high'),
          );
        },
      ),
      { numRuns: 200 },
    );
  });

  it('hands out slots in arrival order per lane', () => {
    const orderArb = fc.array(
      requestArb.map((r) => ({ ...r, delayMs: 0, amount: 1 })),
      { maxLength: 200 },
    );
    fc.assert(
      fc.property(quotaArb, orderArb, (q, requests) => {
        const spec = memberSpec(quotaOf(q), W);
        const { plans } = play(spec, requests);
        for (const lane of ['normal', 'high'] as const) {
          const slots = plans
            .filter((p, i) => p && requests[i]?.priority === lane)
            .map((p) => (p as SlotPlan).slotMs);
          expect(slots).toEqual([...slots].sort((a, b) => a - b));
        }
      }),
      { numRuns: 300 },
    );
  });

  it('hands high slots out in arrival order across both pools when a busy line may be joined a little late', () => {
    // Joining a busy line starts at its next free slot, up to the tolerance before the wanted time: the pool
    // comparison must use that start, or the next message takes an earlier slot in one pool than this one took in
    // the other.
    const highArb = fc.array(
      fc.record({ gapMs: fc.oneof(fc.constant(0), fc.integer({ min: 0, max: 10_000 })) }),
      { minLength: 2, maxLength: 120 },
    );
    fc.assert(
      fc.property(quotaArb, highArb, fc.integer({ min: 1, max: 5_000 }), (q, requests, toleranceMs) => {
        const spec = memberSpec(quotaOf(q), W);
        let states: Record<Pool, PoolState> = { n: emptyPool(), h: emptyPool() };
        let now = T0;
        const slots: number[] = [];
        for (const r of requests) {
          now += r.gapMs;
          const plan = bestSlot(states, spec, 'high', {
            amount: 1,
            notBeforeMs: now,
            nowMs: now,
            toleranceMs,
          });
          if (!plan) continue;
          const after = applySlot(states[plan.pool], plan);
          states = { ...states, [plan.pool]: after };
          slots.push(grantedSlot(after, plan));
        }
        expect(slots).toEqual([...slots].sort((a, b) => a - b));
      }),
      { numRuns: 500 },
    );
  });

  it('keeps the limits when writers plan from stale copies, or blind, and the store checks each plan', () => {
    const stepArb = fc.record({
      writer: fc.integer({ min: 0, max: 3 }),
      // A container that has not seen the key (or evicted it) plans blind.
      forget: fc.boolean(),
      request: requestArb,
    });
    fc.assert(
      // Small hour limits, so that blind reservations meet a full hour often.
      fc.property(
        quotaArb,
        fc.integer({ min: 1, max: 20 }),
        fc.array(stepArb, { maxLength: 200 }),
        (q, hour, steps) => {
          const quota = quotaOf({ ...q, perMemberPerHour: hour });
          const spec = memberSpec(quota, W);
          // A busy key may hand out a slot up to half what the margin absorbs in the past; the send goes at once.
          const allMinute = effectiveLimit(quota.perMemberPerMinute, quota, 'high');
          const minPace = Math.min(spec.pools.n.paceMs ?? Infinity, spec.pools.h.paceMs ?? Infinity);
          const tolerance = ((quota.perMemberPerMinute - allMinute) * minPace) / 2;
          const sends: number[] = [];
          let stored: Record<Pool, PoolState> = { n: emptyPool(), h: emptyPool() };
          const copies: (Record<Pool, PoolState> | undefined)[] = [
            undefined,
            undefined,
            undefined,
            undefined,
          ];
          let now = T0;
          const units: number[] = [];
          for (const { writer, forget, request: r } of steps) {
            now += r.gapMs;
            if (forget) copies[writer] = undefined;
            for (let attempt = 0; attempt < 20; attempt++) {
              const copy = copies[writer];
              const plan =
                copy === undefined && r.amount === 1
                  ? blindSlot(spec, now)
                  : bestSlot(copy ?? stored, spec, r.priority, {
                      amount: r.amount,
                      notBeforeMs: now,
                      nowMs: now,
                      toleranceMs: tolerance,
                    });
              if (!plan) break;
              const fits = planFits(stored[plan.pool], plan);
              if (fits) stored = { ...stored, [plan.pool]: applySlot(stored[plan.pool], plan) };
              copies[writer] = stored;
              if (!fits) continue;
              // A busy key appends: the slot is wherever the next free one stood, not where this writer thought.
              const granted = { ...plan, slotMs: grantedSlot(stored[plan.pool], plan) };
              expect(granted.slotMs).toBeGreaterThanOrEqual(now - tolerance);
              const at = unitsOf(granted, spec, r.priority, 0).map((u) => u.at);
              units.push(...at);
              sends.push(...at.map((t) => Math.max(t, now)));
              break;
            }
          }
          expect(maxInRollingWindow(sends, W.minuteMs)).toBeLessThanOrEqual(quota.perMemberPerMinute);
          expect(maxInRollingWindow(units, W.minuteMs)).toBeLessThanOrEqual(
            effectiveLimit(quota.perMemberPerMinute, quota, 'high'),
          );
          expect(maxInRollingWindow(units, W.hourMs)).toBeLessThanOrEqual(
            effectiveLimit(quota.perMemberPerHour, quota, 'high'),
          );
        },
      ),
      { numRuns: 600 },
    );
  });

  it('sends a member’s backlog at the full allowed rate: 24 a minute on the high lane, 19 on normal', () => {
    const quota = quotaOf({});
    const spec = memberSpec(quota, W);
    for (const [priority, perMinute] of [
      ['high', 24],
      ['normal', 19],
    ] as const) {
      const { units } = play(
        spec,
        Array.from({ length: 240 }, () => ({ gapMs: 0, priority, amount: 1, delayMs: 0 })),
      );
      const minutes = new Map<number, number>();
      for (const u of units) {
        const m = Math.floor((u.at - T0) / W.minuteMs);
        minutes.set(m, (minutes.get(m) ?? 0) + 1);
      }
      // Every full minute of the backlog gets exactly the allowed count: the same sustained rate as the margin.
      expect([...minutes.values()].slice(0, 9)).toEqual(Array(9).fill(perMinute));
    }
  });

  it('lets the hour take the minute’s rate in bursts, then waits for the oldest bucket to leave the window', () => {
    const quota = quotaOf({ perMemberPerHour: 100 });
    const spec = memberSpec(quota, W);
    const { units } = play(
      spec,
      Array.from({ length: 81 }, () => ({ gapMs: 0, priority: 'high' as const, amount: 1, delayMs: 0 })),
    );

    // 80 allowed an hour at 24 a minute: the first 80 go within 3⅓ minutes, the 81st only once the hour (plus the
    // log's padding) has passed over the first ones.
    expect((units[79] as Unit).at - T0).toBeLessThan(4 * W.minuteMs);
    expect((units[80] as Unit).at - T0).toBeGreaterThanOrEqual(W.hourMs);
  });

  it('lets high pass a normal backlog reserved ahead', () => {
    const quota = quotaOf({});
    const spec = memberSpec(quota, W);
    const backlog = Array.from({ length: 60 }, () => ({
      gapMs: 0,
      priority: 'normal' as const,
      amount: 1,
      delayMs: 0,
    }));
    const { plans } = play(spec, [...backlog, { gapMs: 1_000, priority: 'high', amount: 1, delayMs: 0 }]);

    const normalLast = (plans[59] as SlotPlan).slotMs;
    const high = plans[60] as SlotPlan;
    expect(normalLast - T0).toBeGreaterThan(2 * W.minuteMs);
    expect(high.pool).toBe('h');
    expect(high.slotMs).toBe(T0 + 1_000);
  });

  it('refuses for good only what no window could hold', () => {
    const quota = quotaOf({ perDay: 100 });
    const spec = personTimesSpec(quota, W);
    const states = { n: emptyPool(), h: emptyPool() };

    // 80 allowed a day: 64 that normal may use, 16 kept for high; high may take both at once.
    expect(bestSlots(states, spec, 'high', { amount: 80, notBeforeMs: T0 })).toMatchObject([
      { pool: 'n', amount: 64, slotMs: T0 },
      { pool: 'h', amount: 16, slotMs: T0 },
    ]);
    expect(bestSlots(states, spec, 'high', { amount: 81, notBeforeMs: T0 })).toBeUndefined();
    expect(bestSlots(states, spec, 'normal', { amount: 64, notBeforeMs: T0 })).toMatchObject([
      { pool: 'n', amount: 64, slotMs: T0 },
    ]);
    expect(bestSlots(states, spec, 'normal', { amount: 65, notBeforeMs: T0 })).toBeUndefined();
  });

  it('spends a day of person-times in a burst and gives them back as the rolling day passes', () => {
    const quota = quotaOf({ perDay: 1_000 });
    const spec = personTimesSpec(quota, W);
    let states: Record<Pool, PoolState> = { n: emptyPool(), h: emptyPool() };
    const take = (amount: number, at: number) => {
      const plans = bestSlots(states, spec, 'high', { amount, notBeforeMs: at }) as SlotPlan[];
      for (const p of plans) states = { ...states, [p.pool]: applySlot(states[p.pool], p) };
      return plans[0] as SlotPlan;
    };
    const first = take(500, T0);
    const second = take(300, T0 + 1_000);

    const third = take(100, T0 + 2_000);

    // 800 allowed a day; 800 spent in a burst, so the next 100 wait for the day (and its padding) to pass.
    expect(first.slotMs).toBe(T0);
    expect(second.slotMs).toBe(T0 + 1_000);
    expect(third.slotMs).toBeGreaterThanOrEqual(T0 + W.dayMs);
    expect(third.slotMs).toBeLessThanOrEqual(T0 + W.dayMs + 3 * bucketMsOf(spec));
  });
});
