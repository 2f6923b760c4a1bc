import type { QuotaConfig } from '#lib/config/index.js';
import { bucketMsOf, type CounterSpec, POOLS, type PoolLimits } from './slots.js';
import { effectiveLimit, type QuotaWindows } from './windows.js';

/**
 * The counters the gateway keeps per app, and their limits. Each long window is a sliding log of this many buckets;
 * one bucket more covers a send that reaches WeCom after its slot's bucket ended (a slot may be used up to a
 * bucket late: 60 s for the hour, 24 min for the day). The sustained rate is 60/62 of the allowed count.
 */
const BUCKETS = 60;
const PAD = 1;

/** Which counter a letter names in a quota item (attribute prefixes; lib/store keeps them). */
export const COUNTER = {
  /** Per member: the minute paced, the hour as a sliding log. */
  member: 'm',
  /** The app's shared broadcast allowance (broadcasts of configured size), counted like a member. */
  broadcast: 'b',
  /** The app's message/send calls: the minute paced, the hour as a sliding log. */
  calls: 'c',
  /** The app's person-times in a rolling day. */
  personTimes: 'd',
} as const;

/** Pools of one limit: `n` is what `normal` may use, `h` the rest, which only `high` may use. */
function pools(longLimit: number, minuteLimit: number | undefined, minuteMs: number, quota: QuotaConfig) {
  // Rounded up to 1/1024 ms: sums of such binary fractions are exact in a double (epoch ms < 2^43), so n slots a
  // pace apart never fit in a minute by a rounding error.
  const pace = (n: number) => (n > 0 ? Math.ceil((minuteMs * 1024) / n) / 1024 : Number.POSITIVE_INFINITY);
  const normalLong = effectiveLimit(longLimit, quota, 'normal');
  const n: PoolLimits = { limit: normalLong };
  const h: PoolLimits = { limit: effectiveLimit(longLimit, quota, 'high') - normalLong };
  if (minuteLimit !== undefined) {
    const normalMinute = effectiveLimit(minuteLimit, quota, 'normal');
    n.paceMs = pace(normalMinute);
    h.paceMs = pace(effectiveLimit(minuteLimit, quota, 'high') - normalMinute);
  }
  return { n, h };
}

/**
 * WeCom's per-member limits, split when the app sends broadcasts of configured size: those cannot be charged to the
 * members they reach (their membership is unknown), so a share of every member's allowance is kept for them and
 * charged once per broadcast (the `broadcast` counter). Direct messages get the rest.
 */
export function memberLimits(quota: QuotaConfig, broadcastShare: number) {
  const keep = (limit: number) => (broadcastShare > 0 ? Math.max(1, Math.floor(limit * broadcastShare)) : 0);
  const broadcast = { perMinute: keep(quota.perMemberPerMinute), perHour: keep(quota.perMemberPerHour) };
  return {
    direct: {
      perMinute: Math.max(1, quota.perMemberPerMinute - broadcast.perMinute),
      perHour: Math.max(1, quota.perMemberPerHour - broadcast.perHour),
    },
    broadcast,
  };
}

const hourly = (w: QuotaWindows) => ({ lengthMs: w.hourMs, buckets: BUCKETS, pad: PAD });

/** A member's counter (or, with `broadcast`, the app's shared broadcast allowance). */
export function memberSpec(
  quota: QuotaConfig,
  w: QuotaWindows,
  broadcastShare = 0,
  of: 'direct' | 'broadcast' = 'direct',
): CounterSpec {
  const limits = memberLimits(quota, broadcastShare)[of];
  return {
    name: of === 'direct' ? COUNTER.member : COUNTER.broadcast,
    window: hourly(w),
    pools: pools(limits.perHour, limits.perMinute, w.minuteMs, quota),
  };
}

/** The app's message/send calls (WeCom: per corp per API 10,000 a minute, 150,000 an hour). */
export const callsSpec = (quota: QuotaConfig, w: QuotaWindows): CounterSpec => ({
  name: COUNTER.calls,
  window: hourly(w),
  pools: pools(quota.perHour, quota.perMinute, w.minuteMs, quota),
});

/** The app's person-times (WeCom: seats × 200 a day; a send to 1,000 people is 1,000). */
export const personTimesSpec = (quota: QuotaConfig, w: QuotaWindows): CounterSpec => ({
  name: COUNTER.personTimes,
  window: { lengthMs: w.dayMs, buckets: BUCKETS, pad: PAD },
  pools: pools(quota.perDay, undefined, w.minuteMs, quota),
});

/** The counters one app's sends are reserved on, with its limits (the broadcast split applies to every member). */
export interface AppCounters {
  member: CounterSpec;
  broadcast: CounterSpec;
  calls: CounterSpec;
  personTimes: CounterSpec;
}

export function appCounters(quota: QuotaConfig, w: QuotaWindows, broadcastShare: number): AppCounters {
  return {
    member: memberSpec(quota, w, broadcastShare),
    broadcast: memberSpec(quota, w, broadcastShare, 'broadcast'),
    calls: callsSpec(quota, w),
    personTimes: personTimesSpec(quota, w),
  };
}

/** How late a reserved slot may still be used, and how far before the wanted time a busy line may be joined. */
export interface Lateness {
  latenessMs: number;
  toleranceMs: number;
}

/**
 * How late a send may reach WeCom after its slot and keep WeCom's rolling minute within WeCom's limit, for paced
 * pools that share that limit. Each pool hands out slots a pace apart, so a window of a minute plus L holds at most
 * ⌊L ÷ pace⌋ + 1 more of its slots than its allowance (the pools' lines may stand in step): the sum over the pools
 * must stay within WeCom's limit less the allowed count (`slack`). 0 when even a moment late could pass it.
 */
export function lateBudgetMs(pacesMs: readonly number[], slack: number): number {
  const paces = pacesMs.filter((p) => Number.isFinite(p) && p > 0);
  const over = (late: number) => paces.reduce((n, p) => n + Math.floor(late / p) + 1, 0) > slack;
  if (paces.length === 0 || over(0)) return 0;
  // The count grows only where L crosses a multiple of a pace: the budget ends just before the first that passes.
  // The count only grows with L, so per pace the first of its multiples k × p (1 ≤ k ≤ slack + 1) that passes is
  // found by bisection: a few dozen steps, where listing every multiple took time in proportion to the slack (the
  // sender computes this for every send, and an app allowed a million calls a minute has a slack of 200,000).
  let first = Number.POSITIVE_INFINITY;
  for (const p of paces) {
    let lo = 1;
    let hi = slack + 1;
    if (!over(hi * p)) continue;
    while (lo < hi) {
      const mid = Math.floor((lo + hi) / 2);
      if (over(mid * p)) hi = mid;
      else lo = mid + 1;
    }
    first = Math.min(first, lo * p);
  }
  return first === Number.POSITIVE_INFINITY ? first : first - 1;
}

/**
 * How late a slot may be used: half of what the margin absorbs (lateBudgetMs) over the member's pools and over the
 * app's calls, the other half being for the send's way to WeCom after it; and at most a bucket of the hour, and
 * `maxLatenessMs`. A line may be joined up to half the lateness before the wanted time.
 */
export function latenessOf(
  app: { quota: QuotaConfig; broadcastShare: number },
  w: QuotaWindows,
  maxLatenessMs: number,
): Lateness {
  const q = app.quota;
  const member = memberSpec(q, w, app.broadcastShare);
  const broadcast = memberSpec(q, w, app.broadcastShare, 'broadcast');
  const calls = callsSpec(q, w);
  const paces = (...specs: CounterSpec[]) =>
    specs.flatMap((s) => POOLS.filter((p) => s.pools[p].limit > 0).map((p) => s.pools[p].paceMs ?? 0));
  const split = memberLimits(q, app.broadcastShare);
  const allowed = (limit: number) => (limit > 0 ? effectiveLimit(limit, q, 'high') : 0);
  const memberSlack =
    q.perMemberPerMinute - allowed(split.direct.perMinute) - allowed(split.broadcast.perMinute);
  const memberPaces = app.broadcastShare > 0 ? paces(member, broadcast) : paces(member);
  const latenessMs = Math.max(
    0,
    Math.min(
      maxLatenessMs,
      lateBudgetMs(memberPaces, memberSlack) / 2,
      lateBudgetMs(paces(calls), q.perMinute - allowed(q.perMinute)) / 2,
      bucketMsOf(member),
    ),
  );
  return { latenessMs, toleranceMs: latenessMs / 2 };
}
