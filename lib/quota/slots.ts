/**
 * Send slots under WeCom's limits, kept in every rolling window (WeCom does not say whether "30次/分钟",
 * "1000次/小时" or the day's person-times are fixed or sliding windows, and fixed windows let twice the limit
 * through across a boundary). Pure functions over one counter's state; lib/store keeps the state in one DynamoDB
 * item per key and applies a reservation as one conditional UpdateItem.
 *
 * Two mechanisms, each where it fits:
 *
 * - **The minute: virtual scheduling (GCRA, burst 1).** Each pool keeps a theoretical arrival time `tat`; a
 *   reservation of n units takes the slot s = max(wanted, tat) and moves `tat` to s + n·T, with T = minute ÷ the
 *   allowed count. Slots are at least T apart, so any window of a minute holds at most minute ÷ T of them — the
 *   allowed count, at exactly that sustained rate. Slots are handed out in arrival order (a member's messages
 *   arrive in the order they were reserved) and a deferred message waits for its own slot once, instead of polling
 *   the window with everyone else at its start. Pacing also tolerates lateness: a send that reaches WeCom up to
 *   (WeCom's limit − the allowed count) × T after its slot still keeps WeCom's window within WeCom's limit, so the
 *   safety margin absorbs the time between reserving and sending (a burst allowance would not: two bursts a little
 *   over a minute apart, the first one late, are twice the limit in one window).
 * - **The hour and the day: a sliding log in buckets.** The hour must allow the minute's rate in bursts (WeCom
 *   allows 30 a minute for half an hour, 1000 an hour), and the day is a budget that broadcasts spend in bursts;
 *   pacing either at its own average rate would throttle both. Each pool counts a cumulative total `cum` and keeps,
 *   per bucket (window ÷ 60), the total after its last reservation. A reservation at bucket j is allowed when
 *   everything reserved in buckets j − k − pad … j (k buckets per window, `pad` more for a send that lands after
 *   its slot's bucket) stays within the limit: cum + n − S(j − k − pad − 1) ≤ limit, where S(x) is the snapshot of
 *   bucket x. Any rolling window lies inside such a span, so none holds more than the limit; the sustained rate is
 *   k ÷ (k + pad + 1) = 60/62 of it. Reservations only go to the latest bucket or later, so past snapshots never
 *   change, and the condition is one comparison of `cum` with a number the caller computes: DynamoDB condition
 *   expressions have no arithmetic, and a sliding-window counter that needs a sum cannot be conditional.
 *
 * Priorities: each counter has two pools. `n` holds what `normal` may use (its share of the allowed count), `h`
 * the rest. `normal` reserves from `n` only; `high` from whichever gives the earlier slot. Both pools together never
 * pass the allowed count, and a backlog of `normal` slots reserved ahead never delays `high`.
 */

export type Pool = 'n' | 'h';
export const POOLS: readonly Pool[] = ['n', 'h'];

/** What one pool of a counter has reserved so far. */
export interface PoolState {
  /** Virtual scheduling: the earliest slot the next reservation may take (epoch ms). Absent without pacing. */
  tat?: number;
  /** Units reserved since the counter was created. */
  cum: number;
  /** Bucket of the latest reservation; a reservation never goes to an earlier one. */
  last?: number;
  /** Bucket → `cum` after the last reservation in that bucket (only the buckets that still matter). */
  snaps: ReadonlyMap<number, number>;
  /**
   * What `cum` may reach for a reservation of one unit made without reading the item ({@link blindSlot}): S(j −
   * look-back) + limit as of the latest informed reservation. It only grows with time, so an old value is stricter,
   * never looser.
   */
  ceil?: number;
  /** The pool limit `ceil` was computed with (a lowered limit must not trust an older ceiling). */
  ceilLimit?: number;
}

export const emptyPool = (): PoolState => ({ cum: 0, snaps: new Map() });

/** The counters of one quota item: counter letter (`COUNTER`) → its two pools. */
export type CounterStates = Record<string, Record<Pool, PoolState>>;

/** Whose counters an item holds: one member of an app, the app itself (calls, person-times), its broadcasts. */
export type QuotaKey =
  | { app: string; kind: 'member'; member: string }
  | { app: string; kind: 'app' }
  | { app: string; kind: 'broadcast' };

export interface PoolLimits {
  /** Units the long window may hold. 0: the pool is closed. */
  limit: number;
  /** Minute pacing: ms between slots (Infinity: no minute allowance); absent: no pacing. */
  paceMs?: number;
}

export interface CounterSpec {
  /** Attribute prefix of the counter in its item: one letter. */
  name: string;
  /** The long window (hour or day), counted as a sliding log of `buckets` buckets. */
  window: { lengthMs: number; buckets: number; pad: number };
  pools: Readonly<Record<Pool, PoolLimits>>;
}

/** One reservation on one counter, as the store writes it. */
export interface SlotPlan {
  pool: Pool;
  amount: number;
  /** When the first unit may be used (epoch ms); unit i at slotMs + i × paceMs. */
  slotMs: number;
  /** The long window's bucket the units are counted in. */
  bucket: number;
  /** Condition: the stored `cum` is at most this (the window stays within its limit). */
  maxCum: number;
  /**
   * How a paced counter's write moves `tat` (absent without pacing). `reset`: the pool is idle at `slotMs` (stored
   * `tat` ≤ slotMs), the slot is `slotMs` and `tat` becomes slotMs + spanMs. `append`: the pool is busy; the slot is
   * wherever the stored `tat` stands, which must be ≥ `from` (at most the tolerated lateness before the wanted time)
   * and < `below` (still in the planned bucket), and `tat` grows by spanMs — concurrent appends commute, so writers
   * on a busy key do not refuse each other. Either way the slot is the stored `tat` after the write minus spanMs.
   */
  pace?: { mode: 'reset' | 'append'; spanMs: number; from?: number; below?: number };
  /** Snapshots too old to matter any more: removed in the same write. */
  dropBuckets: number[];
  /** The pool's limit (stored with the ceiling). */
  limit: number;
  /** The new ceiling for later blind reservations (informed plans only). */
  ceil?: number;
  /**
   * Planned without knowing the item (a key this container has not seen): one unit at the wanted time, conditioned on
   * the stored ceiling instead of `maxCum`. Brand-new keys and idle ones pass in one request, as they usually do.
   */
  blind?: true;
}

export const bucketMsOf = (spec: CounterSpec): number =>
  Math.max(1, Math.floor(spec.window.lengthMs / spec.window.buckets));

export const bucketOf = (spec: CounterSpec, t: number): number => Math.floor(t / bucketMsOf(spec));

/** Buckets between a bucket and the one whose snapshot a reservation there subtracts. */
const lookBack = (spec: CounterSpec): number =>
  Math.ceil(spec.window.lengthMs / bucketMsOf(spec)) + spec.window.pad + 1;

/**
 * S(x): the pool's cumulative total at the end of bucket x. Exact for x at or after the oldest kept snapshot (the
 * store keeps one at or before every bucket a reservation can still look back to); 0 before it, which only makes a
 * condition stricter.
 */
export function cumThrough(state: PoolState, x: number): number {
  if (state.last === undefined || x >= state.last) return state.cum;
  let best: { bucket: number; cum: number } | undefined;
  for (const [bucket, cum] of state.snaps)
    if (bucket <= x && (!best || bucket > best.bucket)) best = { bucket, cum };
  return best?.cum ?? 0;
}

/** The oldest bucket whose snapshot a reservation at or after `nowMs` can still need; older ones may go. */
export function staleBuckets(state: PoolState, spec: CounterSpec, nowMs: number): number[] {
  const floor = bucketOf(spec, nowMs) - lookBack(spec);
  let keep: number | undefined;
  for (const b of state.snaps.keys()) if (b <= floor && (keep === undefined || b > keep)) keep = b;
  return keep === undefined ? [] : [...state.snaps.keys()].filter((b) => b < keep);
}

/** What a reservation on one counter asks for. */
export interface SlotAsk {
  /** Units wanted at one slot. */
  amount: number;
  /** The earliest the first unit may be used (epoch ms). */
  notBeforeMs: number;
  /** The time now (which snapshots are stale); default `notBeforeMs`. */
  nowMs?: number;
  /** How far a busy line's next free slot may stand before `notBeforeMs` and still be joined; default 0. */
  toleranceMs?: number;
}

/**
 * The earliest reservation of `amount` units in `pool` at or after `notBeforeMs`, or undefined when the amount is
 * more than the pool's window can ever hold.
 *
 * @example earliestSlot(state, memberSpec, 'n', { amount: 1, notBeforeMs: Date.now() })?.slotMs
 */
export function earliestSlot(
  state: PoolState,
  spec: CounterSpec,
  pool: Pool,
  ask: SlotAsk,
): SlotPlan | undefined {
  const { amount, notBeforeMs, nowMs = notBeforeMs, toleranceMs = 0 } = ask;
  const limits = spec.pools[pool];
  if (!(amount <= limits.limit) || limits.paceMs === Number.POSITIVE_INFINITY) return undefined;
  const bucketMs = bucketMsOf(spec);
  const back = lookBack(spec);
  let slotMs = Math.max(notBeforeMs, state.tat ?? Number.NEGATIVE_INFINITY);
  let bucket = Math.max(bucketOf(spec, slotMs), state.last ?? Number.NEGATIVE_INFINITY);
  for (;;) {
    slotMs = Math.max(slotMs, bucket * bucketMs);
    const out = cumThrough(state, bucket - back);
    if (state.cum + amount - out <= limits.limit) {
      const plan: SlotPlan = {
        pool,
        amount,
        slotMs,
        bucket,
        maxCum: limits.limit - amount + out,
        dropBuckets: staleBuckets(state, spec, nowMs),
        limit: limits.limit,
        ceil: limits.limit + out,
      };
      if (limits.paceMs !== undefined) {
        const spanMs = amount * limits.paceMs;
        // Busy (its next free slot is now, or up to the tolerated lateness ago, or later): append to its line.
        const tat = state.tat;
        const busy =
          tat !== undefined && tat >= notBeforeMs - toleranceMs && slotMs <= Math.max(notBeforeMs, tat);
        plan.pace = busy
          ? { mode: 'append', spanMs, from: notBeforeMs - toleranceMs, below: (bucket + 1) * bucketMs }
          : { mode: 'reset', spanMs };
      }
      return plan;
    }
    // Full: wait for the bucket where the next snapshot leaves the span (S(bucket − back) grows there).
    let next: number | undefined;
    for (const b of state.snaps.keys()) if (b > bucket - back && (next === undefined || b < next)) next = b;
    bucket = (next ?? state.last ?? bucket) + back;
  }
}

/**
 * One unit at `notBeforeMs` in pool `n`, planned without the item's state: the store checks it against the pool's
 * stored ceiling, its next free slot and its latest bucket. Undefined when the pool is closed.
 *
 * @example const plan = cached ? bestSlot(cached, spec, 'normal', 1, now) : blindSlot(spec, now);
 */
export function blindSlot(spec: CounterSpec, notBeforeMs: number): SlotPlan | undefined {
  const limits = spec.pools.n;
  if (!(limits.limit >= 1) || limits.paceMs === Number.POSITIVE_INFINITY) return undefined;
  const plan: SlotPlan = {
    pool: 'n',
    amount: 1,
    slotMs: notBeforeMs,
    bucket: bucketOf(spec, notBeforeMs),
    maxCum: limits.limit - 1,
    dropBuckets: [],
    limit: limits.limit,
    blind: true,
  };
  if (limits.paceMs !== undefined) plan.pace = { mode: 'reset', spanMs: limits.paceMs };
  return plan;
}

/**
 * The better of the pools a priority may use: `normal` only `n`; `high` the earlier slot (ties: `n`).
 *
 * @example bestSlot(states, memberSpec, 'high', { amount: 1, notBeforeMs: Date.now() })
 */
export function bestSlot(
  states: Readonly<Record<Pool, PoolState>>,
  spec: CounterSpec,
  priority: 'high' | 'normal',
  ask: SlotAsk,
): SlotPlan | undefined {
  const normal = earliestSlot(states.n, spec, 'n', ask);
  if (priority === 'normal') return normal;
  const high = earliestSlot(states.h, spec, 'h', ask);
  // Compared where each would really start: joining a busy line starts at its next free slot, which the tolerance
  // lets stand a little before the wanted time; comparing wanted times would let the next message take an earlier
  // slot in one pool than this one took in the other.
  const startOf = (p: SlotPlan): number =>
    p.pace?.mode === 'append' ? (states[p.pool].tat ?? p.slotMs) : p.slotMs;
  const best = !normal || !high ? (normal ?? high) : startOf(high) < startOf(normal) ? high : normal;
  // Not at the very instant of the other pool's latest slot: two messages to one member, one in each pool, would
  // go out at once, in either order. A millisecond later (and no earlier line joined) keeps them in the order they
  // were reserved.
  const other = best?.pool === 'n' ? 'h' : 'n';
  const latest = lastSlot(states[other], spec.pools[other]);
  if (best && latest !== undefined && Math.abs(latest - startOf(best)) < SAME_INSTANT_MS) {
    return bestSlot(states, spec, priority, {
      ...ask,
      notBeforeMs: latest + SAME_INSTANT_MS,
      toleranceMs: 0,
    });
  }
  return best;
}

/** Slots closer than this are one instant (a pool's next free slot less its pace is not exact in a double). */
const SAME_INSTANT_MS = 1;

/** The latest slot a paced pool handed out (its next free one less a pace), if it has one. */
function lastSlot(state: PoolState, limits: PoolLimits): number | undefined {
  const pace = limits.paceMs;
  return state.tat !== undefined && pace !== undefined && Number.isFinite(pace)
    ? state.tat - pace
    : undefined;
}

/**
 * As {@link bestSlot}, and for `high` on a counter without pacing (the day's person-times) also the earliest split
 * of the amount over both pools, `n` first: a large broadcast may need more than either pool alone holds. One or two
 * plans, written together; undefined when no window could ever hold the amount.
 */
export function bestSlots(
  states: Readonly<Record<Pool, PoolState>>,
  spec: CounterSpec,
  priority: 'high' | 'normal',
  ask: SlotAsk,
): SlotPlan[] | undefined {
  const single = bestSlot(states, spec, priority, ask);
  const paced = spec.pools.n.paceMs !== undefined || spec.pools.h.paceMs !== undefined;
  if (priority === 'normal' || paced || (single && single.slotMs <= ask.notBeforeMs))
    return single && [single];
  const split = splitSlot(states, spec, ask);
  const splitMs = split ? Math.max(...split.map((p) => p.slotMs)) : Number.POSITIVE_INFINITY;
  if (!single || splitMs < single.slotMs) return split;
  return [single];
}

function splitSlot(
  states: Readonly<Record<Pool, PoolState>>,
  spec: CounterSpec,
  { amount, notBeforeMs, nowMs = notBeforeMs }: SlotAsk,
): SlotPlan[] | undefined {
  if (amount > spec.pools.n.limit + spec.pools.h.limit) return undefined;
  const back = lookBack(spec);
  const room = (pool: Pool, bucket: number) =>
    spec.pools[pool].limit - (states[pool].cum - cumThrough(states[pool], bucket - back));
  const exits = (pool: Pool, bucket: number) =>
    [...states[pool].snaps.keys(), states[pool].last ?? bucket].filter((b) => b > bucket - back);
  let bucket = Math.max(
    bucketOf(spec, notBeforeMs),
    states.n.last ?? Number.NEGATIVE_INFINITY,
    states.h.last ?? Number.NEGATIVE_INFINITY,
  );
  for (;;) {
    const fromNormal = Math.min(amount, Math.max(0, room('n', bucket)));
    if (fromNormal + room('h', bucket) >= amount) {
      const slotMs = Math.max(notBeforeMs, bucket * bucketMsOf(spec));
      const part = (pool: Pool, n: number): SlotPlan => ({
        pool,
        amount: n,
        slotMs,
        bucket,
        maxCum: spec.pools[pool].limit - n + cumThrough(states[pool], bucket - back),
        dropBuckets: staleBuckets(states[pool], spec, nowMs),
        limit: spec.pools[pool].limit,
        ceil: spec.pools[pool].limit + cumThrough(states[pool], bucket - back),
      });
      const plans: SlotPlan[] = [];
      if (fromNormal > 0) plans.push(part('n', fromNormal));
      if (amount - fromNormal > 0) plans.push(part('h', amount - fromNormal));
      return plans;
    }
    const next = Math.min(...exits('n', bucket), ...exits('h', bucket));
    if (!Number.isFinite(next)) return undefined;
    bucket = next + back;
  }
}

/** A pool after a reservation, as the store's conditional write leaves it. */
export function applySlot(state: PoolState, plan: SlotPlan): PoolState {
  const cum = state.cum + plan.amount;
  const snaps = new Map(state.snaps);
  for (const b of plan.dropBuckets) snaps.delete(b);
  snaps.set(plan.bucket, cum);
  const next: PoolState = { cum, last: Math.max(plan.bucket, state.last ?? plan.bucket), snaps };
  const { pace } = plan;
  const tat = !pace
    ? state.tat
    : pace.mode === 'append'
      ? (state.tat ?? 0) + pace.spanMs
      : plan.slotMs + pace.spanMs;
  if (tat !== undefined) next.tat = tat;
  const ceil = plan.blind ? (state.ceil ?? plan.limit) : plan.ceil;
  if (ceil !== undefined) next.ceil = ceil;
  next.ceilLimit = plan.limit;
  return next;
}

/** Whether a reservation's conditions hold against the stored state (the store's ConditionExpression). */
export function planFits(state: PoolState, plan: SlotPlan): boolean {
  if (state.last === undefined) return true;
  const within = plan.blind
    ? state.ceil !== undefined && state.cum < state.ceil && state.ceilLimit === plan.limit
    : state.cum <= plan.maxCum;
  if (!within || state.last > plan.bucket) return false;
  const { pace } = plan;
  if (!pace) return true;
  if (pace.mode === 'reset') return state.tat === undefined || state.tat <= plan.slotMs;
  return (
    state.tat !== undefined &&
    state.tat >= (pace.from ?? plan.slotMs) &&
    state.tat < (pace.below ?? Number.POSITIVE_INFINITY)
  );
}

/** Where a granted reservation's first unit actually is: for a paced pool, the stored `tat` after it minus its span. */
export function grantedSlot(after: PoolState, plan: SlotPlan): number {
  return plan.pace && after.tat !== undefined ? after.tat - plan.pace.spanMs : plan.slotMs;
}

/**
 * Units of the pool counted in the long window that holds `nowMs` (bucket granularity, reservations ahead of now
 * in the current bucket included).
 */
export function usedInWindow(state: PoolState, spec: CounterSpec, nowMs: number): number {
  const now = bucketOf(spec, nowMs);
  const k = Math.ceil(spec.window.lengthMs / bucketMsOf(spec));
  return Math.max(0, cumThrough(state, now) - cumThrough(state, now - k));
}

/**
 * Slots a paced pool has handed out in the minute that ends at `nowMs` and ahead of it, as an upper bound from two
 * sides: the pace (the pool keeps only its next free slot; exact while a backlog keeps the pace full) and the long
 * window's log (everything reserved in the buckets that overlap that minute; exact for a quiet pool).
 */
export function usedInMinute(
  state: PoolState,
  spec: CounterSpec,
  pool: Pool,
  minuteMs: number,
  nowMs: number,
): number {
  const paceMs = spec.pools[pool].paceMs;
  if (paceMs === undefined || !Number.isFinite(paceMs) || state.tat === undefined) return 0;
  const perMinute = Math.round(minuteMs / paceMs);
  const paced = Math.min(perMinute, Math.max(0, Math.ceil((state.tat - (nowMs - minuteMs)) / paceMs)));
  const logged = state.cum - cumThrough(state, bucketOf(spec, nowMs - minuteMs) - 1);
  return Math.min(paced, logged);
}
