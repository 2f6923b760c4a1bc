import type { Priority } from '#lib/messages/index.js';
import { KeyedQueue } from '#lib/util/index.js';
import type { HeldCall } from './held.js';
import type { QuotaItems, Want } from './items.js';
import type { Ask } from './member-lines.js';
import { bucketMsOf, type QuotaKey, usedInMinute } from './slots.js';
import type { CounterReservation } from './store.js';
import type { QuotaDemand, QuotaScope, Step, WaitDecision } from './types.js';
import { effectiveLimit } from './windows.js';

/** A copy holds an app call at most this far ahead: SQS's longest delay (later, it wakes when the window frees). */
const MAX_HOLD_MS = 15 * 60_000;
/**
 * A `normal` copy holds an app call at most this many inline waits ahead (16 s by default): the calls of the pool
 * both lanes share come free for `high` after that, however long the normal backlog.
 */
const NORMAL_HOLD_WAITS = 4;
/** Largest blocks: calls, person-times (and at most 1 % of the allowance). */
const MAX_BLOCK = { calls: 25, personTimes: 100 };

export interface AppLinesOptions {
  items: QuotaItems;
  now: () => number;
  inlineWaitMs: number;
  minuteMs: number;
  /** Told the app's use of its paced minute after each block (the utilisation metric). */
  onUsage?: (app: string, scope: QuotaScope, used: number, limit: number) => void;
}

/** What one send takes from the app: one call and its person-times, at or after `notBeforeMs`. */
export interface AppTake {
  personTimes: number;
  notBeforeMs: number;
  /** How far after `notBeforeMs` the call may be (default: the lateness). */
  aheadMs?: number;
}

/** App units a container reserved ahead for one app and lane (docs/quota.md, "block"). */
interface Block {
  /** Calls reserved ahead: the next one may go at `nextMs`, each later one a pace after it. */
  calls?: { nextMs: number; left: number; paceMs: number };
  /** Person-times reserved ahead, counted in a bucket of the day that ends at `untilMs`. */
  personTimes?: { left: number; untilMs: number };
}

/** What this container knows of one app's lane: its block, who waits for it, what it took, the calls it let copies hold. */
class AppLane {
  block: Block = {};
  /** Sends waiting for their turn on the block. */
  readonly queued = { calls: 0, personTimes: 0 };
  /** When each recent take happened and its person-times (how big the next block should be). */
  takes: { atMs: number; personTimes: number }[] = [];
  /** The latest app call this container let a deferred copy hold: the app's line is taken until then. */
  heldUntilMs?: number;

  /**
   * One call at or after `notBeforeMs` (at most `aheadMs` after it) and `personTimes` from the block, or what is
   * missing. Calls whose time passed by more than `latenessMs` lapse.
   */
  take(
    t: Required<AppTake>,
    latenessMs: number,
    nowMs: number,
  ): { slotMs: number } | { calls: boolean; personTimes: number } {
    const calls = this.block.calls;
    if (calls && calls.nextMs < t.notBeforeMs - latenessMs) {
      const skip = Math.ceil((t.notBeforeMs - latenessMs - calls.nextMs) / calls.paceMs);
      calls.nextMs += skip * calls.paceMs;
      calls.left -= skip;
    }
    const callOk = calls !== undefined && calls.left > 0 && calls.nextMs <= t.notBeforeMs + t.aheadMs;
    const pt = this.block.personTimes;
    const ptOk =
      t.personTimes === 0 ||
      (pt !== undefined && pt.left >= t.personTimes && Math.max(t.notBeforeMs, nowMs) < pt.untilMs);
    if (!callOk || !ptOk) return { calls: !callOk, personTimes: ptOk ? 0 : t.personTimes };
    const slotMs = Math.max(t.notBeforeMs, calls.nextMs);
    calls.nextMs += calls.paceMs;
    calls.left--;
    if (pt) pt.left -= t.personTimes;
    this.takes.push({ atMs: nowMs, personTimes: t.personTimes });
    this.last = { slotMs, calls, personTimes: t.personTimes };
    return { slotMs };
  }

  /** The latest take, while nothing was taken after it: what `untake` may give back. */
  private last?: { slotMs: number; calls: NonNullable<Block['calls']>; personTimes: number } | undefined;

  /** A call `take` handed out and the send did not use goes back to the block, if it was the last one taken. */
  untake(slotMs: number, personTimes: number): void {
    const last = this.last;
    if (!last || last.slotMs !== slotMs || last.calls !== this.block.calls) return;
    this.last = undefined;
    last.calls.nextMs -= last.calls.paceMs;
    last.calls.left++;
    if (this.block.personTimes) this.block.personTimes.left += personTimes;
    this.takes.pop();
  }

  /** What this container took over the last `windowMs`: a trickle still reserves a block that lasts it a while. */
  recent(windowMs: number, nowMs: number): { calls: number; personTimes: number } {
    this.takes = this.takes.filter((t) => t.atMs >= nowMs - windowMs);
    return { calls: this.takes.length, personTimes: this.takes.reduce((n, t) => n + t.personTimes, 0) };
  }

  /** A new reservation's units join the block (replacing those of the same kind, which it follows). */
  add(plans: readonly CounterReservation[], counters: Ask['counters']): void {
    const calls = plans.find((p) => p.counter === counters.calls.name);
    if (calls) {
      const paceMs = counters.calls.pools[calls.pool].paceMs ?? 0;
      this.block.calls = { nextMs: calls.slotMs, left: calls.amount, paceMs };
    }
    const pt = plans.filter((p) => p.counter === counters.personTimes.name);
    const [firstPt] = pt;
    if (firstPt) {
      this.block.personTimes = {
        left: pt.reduce((n, p) => n + p.amount, 0),
        untilMs: (firstPt.bucket + 1) * bucketMsOf(counters.personTimes),
      };
    }
  }
}

/**
 * The app's lines: its calls (paced, per minute; a log per hour) and its person-times (a log per day), shared by
 * every message of the app. A container reserves them in blocks sized by what it has queued or recently used, so a
 * busy sender pays about one request per block; the records of a batch take their turns on the block one at a
 * time. A copy the app's calls are taken for beyond the inline wait holds the next free call and wakes for it once.
 */
export class AppLines {
  private readonly lanes = new Map<string, Record<Priority, AppLane>>();
  /** One block reservation at a time per lane in this container: the batch's records queue for it. */
  private readonly turns = new KeyedQueue<AppLane>();

  constructor(private readonly opts: AppLinesOptions) {}

  /** One call and the person-times of this send, from the container's block or a new one. */
  take(ask: Ask, t: AppTake): Promise<Step<{ slotMs: number }>> {
    const { demand: d, counters, latenessMs, toleranceMs } = ask;
    const want = { ...t, aheadMs: t.aheadMs ?? latenessMs };
    const lane = this.laneOf(d);
    lane.queued.calls++;
    lane.queued.personTimes += t.personTimes;
    return this.turns.run(lane, async () => {
      const queued = { ...lane.queued };
      lane.queued.calls--;
      lane.queued.personTimes -= t.personTimes;
      const taken = lane.take(want, latenessMs, this.opts.now());
      if ('slotMs' in taken) return { kind: 'granted', slotMs: taken.slotMs };
      // As much as is queued here now, or was used here over the time a unit stays usable, whichever is more.
      const recent = lane.recent(latenessMs, this.opts.now());
      const size = (limit: number, cap: number, own: number, wanted: number) =>
        Math.max(own, Math.min(wanted, Math.max(1, Math.min(cap, Math.floor(limit / 100)))));
      const wants: Want[] = [];
      if (taken.calls) {
        const limit = counters.calls.pools.n.limit + counters.calls.pools.h.limit;
        const amount = size(limit, MAX_BLOCK.calls, 1, Math.max(queued.calls, recent.calls));
        wants.push({ spec: counters.calls, amount });
      }
      if (taken.personTimes > 0) {
        const limit = counters.personTimes.pools.n.limit + counters.personTimes.pools.h.limit;
        const wanted = Math.max(queued.personTimes, recent.personTimes);
        wants.push({
          spec: counters.personTimes,
          amount: size(limit, MAX_BLOCK.personTimes, t.personTimes, wanted),
        });
      }
      const ask1 = {
        key: appKey(d),
        priority: d.priority,
        notBeforeMs: t.notBeforeMs,
        latestMs: t.notBeforeMs + want.aheadMs,
        toleranceMs,
      };
      let r = await this.opts.items.reserve({ ...ask1, wants });
      // A block too big for what is left: the exact amount may still fit.
      if (r.kind !== 'granted') {
        const exact = wants.map((w) => ({ ...w, amount: w.spec === counters.calls ? 1 : t.personTimes }));
        r = await this.opts.items.reserve({ ...ask1, wants: exact });
      }
      if (r.kind !== 'granted') return r;
      lane.add(r.plans, counters);
      this.reportUsage(ask);
      const now = lane.take(want, latenessMs, this.opts.now());
      if ('slotMs' in now) return { kind: 'granted', slotMs: now.slotMs };
      // Joins on a busy line granted the block later than this send may wait: it waits (deferred) and the block
      // stays for the sends after it. Never a send the block has not counted.
      return { kind: 'wait', scope: 'app-minute', retryAtMs: r.slotMs };
    });
  }

  /**
   * A call (and the send's person-times) on the app's line for a copy that waits for it: the next free one after
   * the inline wait, if the app's calls are what is full and it comes within how far this lane may hold. Undefined
   * when the copy holds nothing: it wakes when the window frees up.
   */
  async hold(ask: Ask, full: WaitDecision, personTimes: number): Promise<HeldCall | undefined> {
    const { demand: d, counters, toleranceMs } = ask;
    const now = this.opts.now();
    const appFull = full.scope === 'app-minute' || full.scope === 'app-hour';
    if (!appFull || full.retryAtMs <= now + this.opts.inlineWaitMs) return undefined;
    const wants: Want[] = [{ spec: counters.calls, amount: 1 }];
    if (personTimes > 0) wants.push({ spec: counters.personTimes, amount: personTimes });
    const r = await this.opts.items.reserve({
      key: appKey(d),
      wants,
      priority: d.priority,
      notBeforeMs: full.retryAtMs,
      latestMs: now + this.aheadMs(d.priority),
      toleranceMs,
    });
    if (r.kind !== 'granted') return undefined;
    const lane = this.laneOf(d);
    lane.heldUntilMs = Math.max(lane.heldUntilMs ?? 0, r.slotMs);
    return { slotMs: r.slotMs, personTimes };
  }

  /**
   * Whether a fresh copy goes behind the calls this container let copies hold beyond the inline wait (a backlog):
   * `hold`, it holds the next free call after the inline wait at once; or, beyond what it may hold, it waits and
   * comes back when the latest held call is halfway into that. Undefined when there is no backlog here, or the copy
   * is not fresh (it holds something, names a member reserved for here before, or is a broadcast of configured
   * size).
   */
  behind(
    ask: Ask,
    isKnown: (key: QuotaKey) => boolean,
    nowMs: number,
  ): WaitDecision | { kind: 'hold'; notBeforeMs: number } | undefined {
    const d = ask.demand;
    const heldUntilMs = this.laneOf(d).heldUntilMs;
    if (heldUntilMs === undefined || heldUntilMs <= nowMs + this.opts.inlineWaitMs) return undefined;
    if (d.held || d.broadcasts > 0) return undefined;
    // A member this container reserved for before may be busy itself: its copy would hold a call it cannot use.
    if (d.members.some((member) => isKnown({ app: d.app, kind: 'member', member }))) return undefined;
    const aheadMs = this.aheadMs(d.priority);
    if (heldUntilMs > nowMs + aheadMs)
      return { kind: 'wait', scope: 'app-minute', retryAtMs: heldUntilMs - aheadMs / 2 };
    // The next free call after the inline wait, on whichever pool has it: not after the latest held one, which
    // may stand on the other pool's line and leave this one idle until then.
    return { kind: 'hold', notBeforeMs: nowMs + this.opts.inlineWaitMs + 1 };
  }

  /** A call a send took from the block and will not use goes back to it, if it was the last one taken. */
  untake(ask: Ask, call: { slotMs: number; personTimes: number }): void {
    this.laneOf(ask.demand).untake(call.slotMs, call.personTimes);
  }

  /** How far ahead a copy of this lane may hold an app call. */
  aheadMs(priority: Priority): number {
    return priority === 'high' ? MAX_HOLD_MS : NORMAL_HOLD_WAITS * this.opts.inlineWaitMs;
  }

  private laneOf(d: QuotaDemand): AppLane {
    let lanes = this.lanes.get(d.app);
    if (!lanes) {
      lanes = { high: new AppLane(), normal: new AppLane() };
      this.lanes.set(d.app, lanes);
    }
    return lanes[d.priority];
  }

  /** The app's paced minute as the metric sees it: slots handed out over the last minute and ahead. */
  private reportUsage({ demand: d, counters }: Ask): void {
    const calls = this.opts.items.cached(appKey(d))?.[counters.calls.name];
    if (!this.opts.onUsage || !calls) return;
    const limit = effectiveLimit(d.quota.perMinute, d.quota, 'high');
    const now = this.opts.now();
    const used = (['n', 'h'] as const).reduce(
      (n, pool) => n + usedInMinute(calls[pool], counters.calls, pool, this.opts.minuteMs, now),
      0,
    );
    this.opts.onUsage(d.app, 'app-minute', Math.min(used, limit), limit);
  }
}

const appKey = (d: QuotaDemand): QuotaKey => ({ app: d.app, kind: 'app' });
